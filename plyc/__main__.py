try:
    from .cli import main
except KeyboardInterrupt:       # Ctrl-C while Python loads plyc
    raise SystemExit(130)

raise SystemExit(main())
