/* The one place that reads which output style a tracer has: its
 * operations are chosen here, once, before anything is printed. */
#include "plyc_style.h"

void plyc_output_select(enum plyc_style style, int report)
{
	static struct plyc_output_ops chosen;

	chosen = style == PLYC_STYLE_BPFTRACE ? plyc_output_bpftrace : plyc_output_ply;
	/* bcc's report is printed in place of the style's exit dump */
	if (report) {
		chosen.report = plyc_output_bccreport.report;
		chosen.at_exit = plyc_output_bccreport.at_exit;
	}
	plyc_rt.output = &chosen;
}
