/* platform_simgrid_xml.c: a SimGrid platform file as an XML document,
 * before platform_simgrid.c reads its elements: libxml2's parse (no
 * network, no DTD, the first error kept with its line), the entity
 * references libxml2 leaves unexpanded, each element's attributes against
 * the ones treduce reads, the <platform> version, and the "file:line:
 * <element id='...'>" that starts every message. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "platform/platform_simgrid.h"

/* The attribute `name` of el, or NULL when absent.  Its value is one text
 * node: trd_sg_refuse_entities turned away every document where it is
 * not. */
const char *trd_sg_attr(const xmlNode *el, const char *name)
{
    for (const xmlAttr *a = el->properties; a; a = a->next)
        if (xmlStrEqual(a->name, BAD_CAST name))
            return a->children && a->children->content ? (const char *)a->children->content
                                                       : "";
    return NULL;
}

/* libxml2 leaves entity references it does not expand (user-declared
 * ones, ones from a DTD it does not load) as nodes of their own, which a
 * walk over elements and text would silently read around: refuse them. */
trd_status trd_sg_refuse_entities(const char *path, const xmlNode *node)
{
    for (; node; node = node->next) {
        if (node->type == XML_ENTITY_REF_NODE)
            return trd_fail(TRD_EINVAL, "%s:%ld: entity reference &%s; is not supported",
                            path, xmlGetLineNo(node), (const char *)node->name);
        if (node->type != XML_ELEMENT_NODE)
            continue;
        for (const xmlAttr *a = node->properties; a; a = a->next)
            if (a->children && (a->children->next || a->children->type != XML_TEXT_NODE))
                return trd_fail(TRD_EINVAL, "%s:%ld: attribute '%s' of <%s> holds an entity "
                                "reference, which is not supported", path,
                                xmlGetLineNo(node), (const char *)a->name,
                                (const char *)node->name);
        trd_status st = trd_sg_refuse_entities(path, node->children);
        if (st != TRD_OK)
            return st;
    }
    return TRD_OK;
}

/* "file:line: <host id='h1'>", to start a message with. */
void trd_sg_describe(const char *path, const xmlNode *el, char *buf, size_t size)
{
    const char *id = trd_sg_attr(el, "id"), *src = trd_sg_attr(el, "src"), *dst = trd_sg_attr(el, "dst");
    int n = snprintf(buf, size, "%s:%ld: <%s", path, xmlGetLineNo(el), (const char *)el->name);
    if (id && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " id='%s'", id);
    if (src && dst && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " src='%s' dst='%s'", src, dst);
    if (n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ">");
}

/* Refuses an attribute of el that is not in allowed, as the JSON loader
 * refuses an unknown key: SimGrid's others (availability_file,
 * bandwidth_file, ...) would change the platform, a misspelt one would be
 * read as absent. */
trd_status trd_sg_check_attrs(const char *path, const xmlNode *el,
                              const char *const *allowed)
{
    for (const xmlAttr *a = el->properties; a && allowed; a = a->next) {
        size_t i = 0;
        while (allowed[i] && !xmlStrEqual(a->name, BAD_CAST allowed[i]))
            i++;
        if (allowed[i])
            continue;
        char where[512], list[160] = "";
        trd_sg_describe(path, el, where, sizeof where);
        for (i = 0; allowed[i]; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     allowed[i]);
        return trd_fail(TRD_EINVAL, "%s: attribute '%s' is not supported (treduce reads %s)",
                        where, (const char *)a->name, list);
    }
    return TRD_OK;
}

/* SimGrid 4 files say version="4" or "4.1": older ones had implicit units
 * (simgrid_update_xml converts them), a later major version may mean
 * something else by the same attributes. */
trd_status trd_sg_check_version(const char *where, const char *version)
{
    if (!version)
        return trd_fail(TRD_EINVAL, "%s: attribute 'version' is missing (SimGrid 4 files "
                        "start with <platform version=\"4.1\">)", where);
    char *end;
    long major = strtol(version, &end, 10);
    bool digits = end != version && (*end == '\0' || (end[0] == '.' && end[1] >= '0' &&
                                                      end[1] <= '9' &&
                                                      strspn(end + 1, "0123456789") ==
                                                          strlen(end + 1)));
    if (!digits || version[0] < '0' || version[0] > '9')
        return trd_fail(TRD_EINVAL, "%s: version '%.32s' is not a version number such as "
                        "4.1", where, version);
    if (major < 4)
        return trd_fail(TRD_EINVAL, "%s: version %s is older than 4: update it with "
                        "SimGrid's simgrid_update_xml first", where, version);
    if (major > 4)
        return trd_fail(TRD_EINVAL, "%s: version %s is newer than the SimGrid 4 format "
                        "treduce reads", where, version);
    return TRD_OK;
}

/* libxml2 2.12 made the error of its handlers const */
#if LIBXML_VERSION >= 21200
typedef const xmlError trd_xml_error;
#else
typedef xmlError trd_xml_error;
#endif

typedef struct first_error {
    int line;
    char text[256];
} first_error;

/* Keeps the first error: it says what is wrong, later ones (such as
 * "premature end of data") only follow from it.  In a DOM parse libxml2
 * hands the handler the parser context, where _private is ours. */
static void keep_first_error(void *ctxt, trd_xml_error *error)
{
    first_error *first = ((xmlParserCtxt *)ctxt)->_private;
    if (first->text[0] != '\0' || error->level < XML_ERR_ERROR || error->message == NULL)
        return;
    first->line = error->line;
    snprintf(first->text, sizeof first->text, "%.*s", (int)strcspn(error->message, "\n"),
             error->message);
}

trd_status trd_sg_parse(const char *text, size_t len, const char *path, xmlDoc **doc)
{
    first_error first = {0, ""};
    xmlInitParser();
    xmlParserCtxt *ctxt = xmlNewParserCtxt();
    if (ctxt == NULL)
        return trd_fail(TRD_ENOMEM, "%s: no memory for the XML parser", path);
    ctxt->_private = &first;
    ctxt->sax->serror = keep_first_error;
    /* no network, no DTD, no entity expansion: the file is data, nothing more
     * (trd_read_file keeps len below INT32_MAX) */
    *doc = xmlCtxtReadMemory(ctxt, text, (int)len, path, NULL,
                             XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                 XML_PARSE_BIG_LINES);
    xmlFreeParserCtxt(ctxt);
    if (*doc == NULL)
        return trd_fail(TRD_EINVAL, "%s:%d: malformed XML: %s", path, first.line,
                        first.text[0] ? first.text : "cannot be parsed");
    return TRD_OK;
}
