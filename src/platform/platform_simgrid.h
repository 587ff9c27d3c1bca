/* platform_simgrid.h: what the SimGrid importer's two files share
 * (src/platform/platform_simgrid.c reads the elements into a platform,
 * platform_simgrid_xml.c handles the XML document around them). */
#ifndef TRD_PLATFORM_PLATFORM_SIMGRID_H
#define TRD_PLATFORM_PLATFORM_SIMGRID_H

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "treduce/treduce.h"

/* The document of len bytes of text (path names it in messages);
 * TRD_EINVAL with libxml2's first error and its line when malformed. */
trd_status trd_sg_parse(const char *text, size_t len, const char *path, xmlDoc **doc);
/* Refuses an entity reference left unexpanded anywhere under node. */
trd_status trd_sg_refuse_entities(const char *path, const xmlNode *node);
/* The attribute `name` of el, or NULL when absent. */
const char *trd_sg_attr(const xmlNode *el, const char *name);
/* "file:line: <host id='h1'>" into buf, to start a message with. */
void trd_sg_describe(const char *path, const xmlNode *el, char *buf, size_t size);
/* Refuses an attribute of el that is not in allowed (NULL-ended; NULL:
 * any), naming it and the ones read. */
trd_status trd_sg_check_attrs(const char *path, const xmlNode *el,
                              const char *const *allowed);
/* Refuses a <platform> version (where: its description) other than 4.x. */
trd_status trd_sg_check_version(const char *where, const char *version);

#endif
