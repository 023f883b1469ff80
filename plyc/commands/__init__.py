"""plyc's subcommands, one module each: `add(sub)` puts its parser on the
command line, `run(args)` does it. cli.py lists them in COMMANDS' order."""
