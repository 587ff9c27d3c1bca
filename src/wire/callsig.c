/* callsig.c: the text of a call signature (callsig.h). */
#include "wire/callsig.h"

#include <stdio.h>

void trd_call_sig_text(const trd_call_sig *s, char *buf, size_t size)
{
    if (!s) {
        snprintf(buf, size, "no collective call");
        return;
    }
    char kind[48] = "an allreduce", op[64] = "a user operator";
    if (s->root >= 0)
        snprintf(kind, sizeof kind, "a reduce to root %ld", (long)s->root);
    if (s->op_kind && s->op_type)
        snprintf(op, sizeof op, "%s of %s", s->op_kind, s->op_type);
    else if (s->op_kind)
        snprintf(op, sizeof op, "%s", s->op_kind);
    snprintf(buf, size, "call %lu, %s (%s, %lld x %lu B, %s)", (unsigned long)s->seq, kind,
             s->algo ? s->algo : "?", (long long)s->count, (unsigned long)s->elem, op);
}
