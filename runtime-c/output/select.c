/* The one place that reads which output style a tracer has: its
 * operations are chosen here, once, before anything is printed. */
#include "plyc_btout.h"
#include "plyc_style.h"

void plyc_output_use(const struct plyc_output_ops *ops, enum plyc_style style,
		     const struct plyc_output_ops *report)
{
	static struct plyc_output_ops chosen;

	chosen = *ops;
	/* which bpftrace: 0.27's output unless built for 0.17's */
	plyc_bt_version = style == PLYC_STYLE_BPFTRACE017 ? &plyc_bt_017 : &plyc_bt_027;
	if (style == PLYC_STYLE_BPFTRACE017) {
		chosen.once_only_ends = 0;		/* 0.17 waits for a signal after BEGIN */
		chosen.iteration_through_exit = 0;	/* 0.17 prints up to exit() */
	}
	/* bcc's report is printed in place of the style's exit dump */
	if (report) {
		chosen.report = report->report;
		chosen.at_exit = report->at_exit;
	}
	plyc_rt.output = &chosen;
}
