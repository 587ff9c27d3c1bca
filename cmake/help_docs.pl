#!/usr/bin/perl
# help_docs.pl: the manual pages and the bash completion of the treduce
# tool, made at build time from what the built tool prints, so that they
# follow its help texts without a copy to keep:
#   help_docs.pl --man DIR --version V --date D TOOL   treduce.1 and
#       treduce-COMMAND.1 for every command `treduce --help` lists
#   help_docs.pl --completion FILE TOOL                 the bash completion
#
# What it reads of a help text (tools/, `treduce CMD --help`):
#   - the lines up to the first blank one are the synopsis ("usage: " off);
#   - an indented line "TAG  TEXT" (two spaces or more between them) starts
#     an item of a list, TAG an option or a word; more indented lines go on
#     with it; a line at the left margin is text of a paragraph; a blank
#     line ends a paragraph or a list;
#   - a command's options are the -x and --xyz words of its synopsis (after
#     "treduce CMD") and of its items' tags, and the --xyz VALUE of its text
#     but for those after "treduce OTHER" on a line (another command's); an
#     option's value is the word after it: "a|b|c" lists its values, FILE
#     and PLATFORM complete to files, DIR to folders, --algo to `treduce
#     list`'s names (and auto where the help names it);
#   - a word of the synopsis after "treduce CMD" that is not an option is a
#     sub-command ("a|b" lists several); one with a help of its own (`treduce
#     CMD SUB --help` printing another text) gets a section of the page.
use strict;
use warnings;

my ($man_dir, $completion, $version, $date);
while (@ARGV > 1) {
    my $opt = shift @ARGV;
    if    ($opt eq '--man')        { $man_dir    = shift @ARGV; }
    elsif ($opt eq '--completion') { $completion = shift @ARGV; }
    elsif ($opt eq '--version')    { $version    = shift @ARGV; }
    elsif ($opt eq '--date')       { $date       = shift @ARGV; }
    else { die "help_docs.pl: unknown option '$opt'\n"; }
}
my $tool = shift @ARGV or die "usage: help_docs.pl [--man DIR --version V --date D] "
                            . "[--completion FILE] TOOL\n";
die "help_docs.pl: --man needs --version and --date\n"
  if defined $man_dir && !(defined $version && defined $date);

# The text `treduce ARGS...` prints on stdout; dies unless it exits 0.
sub run_tool {
    my @args = @_;
    open(my $fh, '-|', $tool, @args) or die "help_docs.pl: cannot run $tool: $!\n";
    local $/;
    my $text = <$fh> // '';
    close($fh) or die "help_docs.pl: '$tool @args' failed (status $?)\n";
    return $text;
}

# The same, or undef when it does not exit 0 (stderr dropped).
sub try_tool {
    my @args = @_;
    my $pid = open(my $fh, '-|');
    die "help_docs.pl: cannot fork: $!\n" unless defined $pid;
    if ($pid == 0) {
        open(STDERR, '>', '/dev/null');
        exec($tool, @args) or exit 127;
    }
    local $/;
    my $text = <$fh> // '';
    return close($fh) ? $text : undef;
}

# ---- reading a help text ----------------------------------------------

# A help text as { synopsis => [lines], blocks => [...] }, each block
# {type => 'text', lines => [...]}, {type => 'items', items => [{tag,
# body => [lines]}, ...]} or {type => 'break'} (a blank line).
sub parse_help {
    my ($text) = @_;
    my @lines = split /\n/, $text;
    my @synopsis;
    while (@lines && $lines[0] =~ /\S/) {
        my $l = shift @lines;
        if (!@synopsis) {
            $l =~ s/^usage:\s*//i;
        } else {
            $l =~ s/^ {7}//; # under "usage: "
        }
        push @synopsis, $l;
    }
    shift @lines while @lines && $lines[0] !~ /\S/;
    my @blocks;
    my $item;            # the open item
    my $item_indent = 0; # the column its tag starts at
    for my $l (@lines) {
        if ($l !~ /\S/) {
            undef $item;
            push @blocks, { type => 'break' };
            next;
        }
        my ($indent) = $l =~ /^( *)/;
        $indent = length $indent;
        if ($indent == 0) {
            undef $item;
            if (@blocks && $blocks[-1]{type} eq 'text') {
                push @{ $blocks[-1]{lines} }, $l;
            } else {
                push @blocks, { type => 'text', lines => [$l] };
            }
            next;
        }
        if ($item && $indent > $item_indent) {
            (my $t = $l) =~ s/^\s+//;
            push @{ $item->{body} }, $t;
            next;
        }
        my ($tag, $body) = $l =~ /^ *(\S.*?) {2,}(\S.*)$/;
        if (!defined $tag) {
            ($tag = $l) =~ s/^\s+//;
            $body = undef;
        }
        $item = { tag => $tag, body => defined $body ? [$body] : [] };
        $item_indent = $indent;
        if (@blocks && $blocks[-1]{type} eq 'items') {
            push @{ $blocks[-1]{items} }, $item;
        } else {
            push @blocks, { type => 'items', items => [$item] };
        }
    }
    return { synopsis => \@synopsis, blocks => \@blocks };
}

# Records in %$opts the options of $text, each with the word after it
# ('' for none); of text ($prose), only --long ones with a value.
sub take_options {
    my ($text, $opts, $prose) = @_;
    my $word = qr/[^\s\[\]()|,:;]+/;
    while ($text =~ /(?:^|[\s\[(,|])(--?[A-Za-z][A-Za-z0-9-]*)(?:[ =]($word(?:\|$word)*))?/g) {
        my ($o, $v) = ($1, $2 // '');
        $v = '' if $v =~ /^-/;
        next if $prose && ($o !~ /^--/ || $v eq '');
        $v =~ s/\.$//;
        $opts->{$o} = $v if !exists $opts->{$o} || $opts->{$o} eq '';
    }
}

# Options of a parsed help: { '--name' => its value's word or '' }.  Of a
# synopsis line, what follows "treduce CMD" (not mpirun's options before);
# of the text, --long options only.
sub help_options {
    my ($cmd, $help, $opts) = @_;
    for my $l (@{ $help->{synopsis} }) {
        (my $own = $l) =~ s/^.*?\btreduce \Q$cmd\E\b//;
        take_options($own, $opts, 0);
    }
    for my $b (@{ $help->{blocks} }) {
        if ($b->{type} eq 'items') {
            for my $it (@{ $b->{items} }) {
                my @parts = split /,\s*/, $it->{tag};
                my ($arg) = $parts[-1] =~ /^-\S+ (\S+)/; # "-p, --platform FILE"
                for my $p (@parts) {
                    $p .= " $arg" if defined $arg && $p =~ /^-\S+$/;
                    take_options($p, $opts, 0) if $p =~ /^-/;
                }
                take_options(own_text($cmd, $_), $opts, 1) for @{ $it->{body} };
            }
        } elsif ($b->{type} eq 'text') {
            take_options(own_text($cmd, $_), $opts, 1) for @{ $b->{lines} };
        }
    }
}

# A line of text without what follows another command's name on it
# ("treduce run --profile" in calibrate's help is run's option).
sub own_text {
    my ($cmd, $line) = @_;
    $line =~ s/\btreduce (?!\Q$cmd\E\b)[a-z]+\b.*//;
    return $line;
}

# The text and the items' text of a parsed help, as one string.
sub help_text {
    my ($help) = @_;
    my @lines;
    for my $b (@{ $help->{blocks} }) {
        push @lines, @{ $b->{lines} } if $b->{type} eq 'text';
        push @lines, map { @{ $_->{body} } } @{ $b->{items} } if $b->{type} eq 'items';
    }
    return join "\n", @lines;
}

# Sub-commands named by a synopsis: words after "treduce CMD".
sub help_subcommands {
    my ($cmd, $help) = @_;
    my @subs;
    for my $l (@{ $help->{synopsis} }) {
        next unless $l =~ /\btreduce \Q$cmd\E ([a-z][a-z0-9|-]*)/;
        push @subs, split /\|/, $1;
    }
    my %seen;
    return grep { !$seen{$_}++ } @subs;
}

# ---- the tool's commands --------------------------------------------

my $top = run_tool('--help');
my (@commands, %summary, @intro);
{
    my ($in_list, $in_usage) = (0, 0);
    for my $l (split /\n/, $top) {
        $in_usage = 1 if $l =~ /^usage:/i;
        $in_usage = 0 if $in_usage && $l !~ /\S/;
        next if $in_usage; # the synopsis, up to its blank line
        if ($l =~ /^commands:/) { $in_list = 1; next; }
        if ($in_list && $l =~ /^\s+(\S+)\s+(.*)$/) {
            push @commands, $1;
            $summary{$1} = $2;
            next;
        }
        $in_list = 0 if $in_list && $l !~ /\S/;
        push @intro, $l unless $in_list;
    }
}
die "help_docs.pl: '$tool --help' lists no commands\n" unless @commands;
my (%help, %sub_help);
for my $c (@commands) {
    my $text = run_tool($c, '--help');
    $help{$c} = parse_help($text);
    for my $s (help_subcommands($c, $help{$c})) {
        my $t = try_tool($c, $s, '--help');
        $sub_help{$c}{$s} = parse_help($t) if defined $t && $t ne $text && $t =~ /\S/;
    }
}

# ---- manual pages ------------------------------------------------------

# Text for roff: backslashes, hyphens as minus signs, no line starting
# with a control character.
sub roff {
    my ($s) = @_;
    $s =~ s/\\/\\e/g;
    $s =~ s/-/\\-/g;
    $s =~ s/^([.'])/\\&$1/;
    return $s;
}

# An item's tag with its options in bold.
sub roff_tag {
    my ($tag) = @_;
    my $out = '';
    for my $tok (split /(\s+|,)/, $tag) {
        $out .= $tok =~ /^--?[A-Za-z]/ ? '\fB' . roff($tok) . '\fR' : roff($tok);
    }
    $out =~ s/^([.'])/\\&$1/;
    return $out;
}

sub roff_synopsis {
    my ($lines) = @_;
    my $out = ".nf\n";
    for my $l (@$lines) {
        my $r = roff($l);
        $r =~ s/^(\s*)(treduce(?: [a-z]+)?)/$1\\fB$2\\fR/;
        $out .= "$r\n";
    }
    return $out . ".fi\n";
}

sub roff_blocks {
    my ($blocks) = @_;
    my $out = '';
    my $need_pp = 0;
    for my $b (@$blocks) {
        if ($b->{type} eq 'break') {
            $need_pp = 1;
        } elsif ($b->{type} eq 'text') {
            $out .= ".PP\n" if $need_pp;
            $out .= roff($_) . "\n" for @{ $b->{lines} };
            $need_pp = 1;
        } else {
            for my $it (@{ $b->{items} }) {
                $out .= ".TP\n" . roff_tag($it->{tag}) . "\n";
                $out .= roff($_) . "\n" for @{ $it->{body} };
            }
            $need_pp = 1;
        }
    }
    return $out;
}

sub man_header {
    my ($name, $whatis) = @_;
    (my $title = uc $name) =~ s/-/\\-/g;
    (my $cmd = $name) =~ s/-/ /;
    return ".\\\" Generated by cmake/help_docs.pl from '$cmd --help'; do not edit.\n"
         . ".TH $title 1 \"$date\" \"treduce $version\" \"User Commands\"\n"
         . ".SH NAME\n" . roff($name) . " \\- " . roff($whatis) . "\n";
}

sub write_file {
    my ($path, $text) = @_;
    open(my $fh, '>', $path) or die "help_docs.pl: cannot write $path: $!\n";
    print $fh $text;
    close($fh) or die "help_docs.pl: cannot write $path: $!\n";
}

if (defined $man_dir) {
    my ($whatis) = grep { /\S/ } @intro;
    $whatis =~ s/\.\s*$//;
    $whatis = lcfirst $whatis;
    my $page = man_header('treduce', $whatis);
    $page .= ".SH SYNOPSIS\n.nf\n\\fBtreduce\\fR \\fIcommand\\fR [\\fIoptions\\fR]\n"
           . "\\fBtreduce\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR\n.fi\n";
    $page .= ".SH DESCRIPTION\n";
    my @paras = grep { /\S/ } @intro;
    $page .= roff($_) . "\n" for @paras;
    $page .= ".SH COMMANDS\n";
    for my $c (@commands) {
        $page .= ".TP\n\\fB" . roff($c) . "\\fR\n" . roff($summary{$c})
               . "; see \\fB\\%treduce\\-" . roff($c) . "\\fR(1).\n";
    }
    $page .= ".SH SEE ALSO\n"
           . join(",\n", map { "\\fB\\%treduce\\-" . roff($_) . "\\fR(1)" } @commands) . "\n";
    write_file("$man_dir/treduce.1", $page);

    for my $c (@commands) {
        my $h = $help{$c};
        my $p = man_header("treduce-$c", $summary{$c});
        $p .= ".SH SYNOPSIS\n" . roff_synopsis($h->{synopsis});
        $p .= ".SH DESCRIPTION\n" . roff_blocks($h->{blocks});
        for my $s (sort keys %{ $sub_help{$c} || {} }) {
            my $sh = $sub_help{$c}{$s};
            $p .= ".SH \"" . roff(uc "treduce $c $s") . "\"\n"
                . roff_synopsis($sh->{synopsis}) . ".PP\n" . roff_blocks($sh->{blocks});
        }
        $p .= ".SH SEE ALSO\n\\fBtreduce\\fR(1)\n";
        write_file("$man_dir/treduce-$c.1", $p);
    }
}

# ---- bash completion ---------------------------------------------------

# A word list for a bash single-quoted string.
sub words { my $s = join(' ', @_); $s =~ s/'/'\\''/g; return "'$s'"; }

if (defined $completion) {
    my @algos = map { /^(\S+)/ ? $1 : () } split /\n/, run_tool('list');
    my $out = "# bash completion of treduce: its commands, their options and their\n"
            . "# values.  Generated by cmake/help_docs.pl from the tool's help texts;\n"
            . "# do not edit.\n"
            . "_treduce()\n{\n"
            . "    local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}\n"
            . "    local opts='' subs='' values='' kind=''\n"
            . "    COMPREPLY=()\n"
            . "    if [ \"\$COMP_CWORD\" -eq 1 ]; then\n"
            . "        COMPREPLY=(\$(compgen -W " . words(@commands, '--help') . " -- \"\$cur\"))\n"
            . "        return\n    fi\n"
            . "    case \${COMP_WORDS[1]} in\n";
    for my $c (@commands) {
        my %opts = ('--help' => '');
        help_options($c, $help{$c}, \%opts);
        help_options($c, $_, \%opts) for values %{ $sub_help{$c} || {} };
        my @subs = help_subcommands($c, $help{$c});
        my $auto = help_text($help{$c}) =~ /\bauto\b/; # run --algo auto
        $out .= "    $c)\n        opts=" . words(sort keys %opts) . "\n";
        $out .= "        subs=" . words(@subs) . "\n" if @subs;
        my (@cases);
        for my $o (sort keys %opts) {
            my $v = $opts{$o};
            next if $v eq '';
            if ($o eq '--algo') {
                push @cases, "$o) values=" . words(@algos, $auto ? ('auto') : ()) . " ;;";
            } elsif ($v =~ /\|/ && $v !~ /(?:^|\|)[A-Z]/) { # not "LIST|all"
                push @cases, "$o) values=" . words(split /\|/, $v) . " ;;";
            } elsif ($v =~ /^(?:FILE|PLATFORM|PATH)$/) {
                push @cases, "$o) kind=file ;;";
            } elsif ($v eq 'DIR') {
                push @cases, "$o) kind=dir ;;";
            } else {
                push @cases, "$o) kind=none ;;";
            }
        }
        if (@cases) {
            $out .= "        case \$prev in\n";
            $out .= "        $_\n" for @cases;
            $out .= "        esac\n";
        }
        $out .= "        ;;\n";
    }
    $out .= "    *) return ;;\n    esac\n"
          . "    if [ -n \"\$values\" ]; then\n"
          . "        COMPREPLY=(\$(compgen -W \"\$values\" -- \"\$cur\"))\n"
          . "    elif [ \"\$kind\" = file ]; then\n"
          . "        compopt -o filenames 2>/dev/null\n"
          . "        COMPREPLY=(\$(compgen -f -- \"\$cur\"))\n"
          . "    elif [ \"\$kind\" = dir ]; then\n"
          . "        compopt -o filenames 2>/dev/null\n"
          . "        COMPREPLY=(\$(compgen -d -- \"\$cur\"))\n"
          . "    elif [ -n \"\$kind\" ]; then\n"
          . "        return\n"
          . "    elif [ \"\$COMP_CWORD\" -eq 2 ] && [ -n \"\$subs\" ] && [[ \$cur != -* ]]; then\n"
          . "        COMPREPLY=(\$(compgen -W \"\$subs\" -- \"\$cur\"))\n"
          . "    elif [[ \$cur == -* ]]; then\n"
          . "        COMPREPLY=(\$(compgen -W \"\$opts\" -- \"\$cur\"))\n"
          . "    else\n"
          . "        compopt -o filenames 2>/dev/null\n"
          . "        COMPREPLY=(\$(compgen -f -- \"\$cur\"))\n"
          . "    fi\n}\n"
          . "complete -F _treduce treduce\n";
    write_file($completion, $out);
}
