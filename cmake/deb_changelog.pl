#!/usr/bin/perl
# deb_changelog.pl CHANGELOG.md MAINTAINER DATE OUT: CHANGELOG.md in the
# format of a Debian changelog (deb-changelog(5)) in OUT, the changelog of the
# Debian packages (native packages: treduce packages itself).  Each
# "## VERSION" section is an entry: its "### heading" a top bullet, its
# "- item" lines sub-bullets, its other paragraphs top bullets, reflowed
# to 78 columns.  An entry is dated by its heading's "(YYYY-MM-DD)" when
# it has one, else DATE (RFC 2822: the build's, for an unreleased one).
use strict;
use warnings;

my ($md, $maintainer, $date, $out) = @ARGV;
die "usage: deb_changelog.pl CHANGELOG.md MAINTAINER DATE OUT\n" unless defined $out;
open(my $fh, '<', $md) or die "deb_changelog.pl: cannot read $md: $!\n";
my @lines = <$fh>;
close($fh);

my @days = qw(Sun Mon Tue Wed Thu Fri Sat);
my @months = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);
sub rfc2822 { # YYYY-MM-DD at noon UTC
    my ($y, $m, $d) = @_;
    my ($yy, $mm) = $m < 3 ? ($y - 1, $m + 12) : ($y, $m); # Zeller's congruence
    my $w = ($d + int(13 * ($mm + 1) / 5) + $yy % 100 + int(($yy % 100) / 4)
             + int(int($yy / 100) / 4) + 5 * int($yy / 100)) % 7; # 0: Saturday
    return sprintf("%s, %02d %s %04d 12:00:00 +0000", $days[($w + 6) % 7], $d,
                   $months[$m - 1], $y);
}

# Wraps $text at 78 columns: the first line after $first, the others
# after $rest.
sub wrap {
    my ($text, $first, $rest) = @_;
    my ($out, $line) = ('', $first);
    for my $w (split ' ', $text) {
        if (length($line) + length($w) + 1 > 78 && $line =~ /\S/) {
            $line =~ s/\s+$//;
            $out .= "$line\n";
            $line = $rest;
        }
        $line .= ($line =~ /\S$/ ? ' ' : '') . $w;
    }
    return $out . "$line\n";
}

my (@entries, $entry, $para, $kind);
my $flush = sub {
    return unless defined $para && defined $entry;
    $para =~ s/`//g;
    $entry->{body} .= $kind eq 'item' ? wrap($para, '    - ', '      ')
                    : $kind eq 'head' ? wrap("$para:", '  * ', '    ')
                    : wrap($para, '  * ', '    ');
    undef $para;
};
for my $l (@lines) {
    chomp $l;
    if ($l =~ /^## +(\S+)(?: +\((\d{4})-(\d\d)-(\d\d)\))?/) {
        $flush->();
        $entry = { version => $1, date => defined $2 ? rfc2822($2, $3, $4) : $date,
                   body => '' };
        push @entries, $entry;
    } elsif (!defined $entry) {
        next;
    } elsif ($l =~ /^### +(.*)/) {
        $flush->();
        $entry->{body} .= "\n" if $entry->{body} ne '';
        ($para, $kind) = ($1, 'head');
        $flush->();
    } elsif ($l =~ /^- +(.*)/) {
        $flush->();
        ($para, $kind) = ($1, 'item');
    } elsif ($l =~ /\S/) {
        if (defined $para) { $para .= " $l"; } else { ($para, $kind) = ($l, 'text'); }
    } else {
        $flush->();
    }
}
$flush->();
die "deb_changelog.pl: no '## VERSION' section in $md\n" unless @entries;
open(my $o, '>', $out) or die "deb_changelog.pl: cannot write $out: $!\n";
for my $e (@entries) {
    print $o "treduce ($e->{version}) unstable; urgency=medium\n\n$e->{body}\n"
        . " -- $maintainer  $e->{date}\n\n";
}
close($o) or die "deb_changelog.pl: cannot write $out: $!\n";
