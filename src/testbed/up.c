/* up.c: `treduce testbed up` as a whole: the platform loaded and laid out
 * (refused before anything is made), the state folder claimed - mkdir is
 * atomic, so of two `up`s of one name one is refused -, the layout saved,
 * the testbed built and then marked complete; whatever fails after the
 * claim, what was made is removed again.  And the module's diagnostics. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "testbed_internal.h"

tb_status tb_say(const tb_report *r, tb_say_kind kind, tb_status status, const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    r->say(r->ctx, kind, text);
    return status;
}

tb_status tb_say_lib(const tb_report *r, trd_status status)
{
    bool input = status == TRD_EINVAL || status == TRD_ENOALGO || status == TRD_EUNSUPPORTED;
    const char *why = trd_errmsg();
    return tb_say(r, TB_SAY_ERROR, input ? TB_REFUSED : TB_FAILED, "%s",
                  why && *why ? why : trd_strerror(status));
}

/* The state folder of t, made here and nowhere else. */
static tb_status claim(const tb_report *r, const tb_layout *t, bool *exists)
{
    char dir[512];
    tb_state_dir(t->name, dir, sizeof dir);
    if (!tb_make_dir(r, "/run/treduce") || !tb_make_dir(r, TB_STATE_ROOT))
        return TB_FAILED;
    if (mkdir(dir, 0755) == 0)
        return TB_OK;
    if ((*exists = errno == EEXIST))
        return tb_say(r, TB_SAY_USAGE, TB_REFUSED, "testbed '%s' exists (%s): 'treduce "
                      "testbed down --name %s' first", t->name, dir, t->name);
    return tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot create %s: %s", dir, strerror(errno));
}

tb_status tb_up(const tb_report *r, const char *path, const char *name, double unit_bytes,
                double time_unit, tb_layout *t)
{
    memset(t, 0, sizeof *t);
    if (!tb_name_ok(r, name))
        return TB_REFUSED;
    if (!tb_privileged(r))
        return TB_FAILED;
    trd_platform *pf = NULL;
    trd_status s = trd_platform_load(path, &pf);
    if (s != TRD_OK)
        return tb_say_lib(r, s);
    tb_status rc = tb_layout_make(r, pf, path, name, unit_bytes, time_unit, t);
    trd_platform_free(pf);
    if (rc != TB_OK)
        return rc;
    bool exists = false;
    if ((rc = claim(r, t, &exists)) == TB_OK && (rc = tb_state_save(r, t)) == TB_OK &&
        (rc = tb_build(r, t)) == TB_OK) {
        t->complete = true;
        rc = tb_state_save(r, t);
    }
    if (rc != TB_OK && !exists)
        tb_down(r, t->name, true); /* a failed build removed itself: this finds nothing */
    return rc;
}
