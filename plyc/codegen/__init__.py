"""From the core IR to C: resources (the BPF/loader contract), BPF bodies, event printers, the rendered files."""
