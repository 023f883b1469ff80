"""Front ends: each turns its language into the core IR (plyc/ir/).

A script language's front end is a package here exporting FRONTEND
(base.FrontEnd); registry.py lists them, and the driver asks it which one
reads a script. argdist's front end reads a command line, not a script:
`plyc argdist` (plyc/commands/argdist.py) calls it and builds its IR."""
