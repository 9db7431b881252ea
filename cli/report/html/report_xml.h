/* tprof report --html: XML escaping (report_xml.c). */
#ifndef TP_CLI_REPORT_XML_H
#define TP_CLI_REPORT_XML_H

#include "cli/report/report_data.h"

/* Text or attribute value, escaped; invalid UTF-8 and characters XML
 * does not allow become U+FFFD. */
void rp_xml_text(struct tp_buf *b, const char *s);

#endif
