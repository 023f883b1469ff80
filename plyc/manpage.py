"""plyc's man page (roff) and its bash completion, both written from the
argument parsers (plyc/cli.py and each command's), so that they say what
the parsers take. The files the package installs (share/man/man1/plyc.1,
share/bash-completion/completions/plyc, pyproject's data-files) are this
module's output, written by `python3 -m plyc.manpage` and held to it by
tests/test_manpage.py."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAN_PAGE = Path("share/man/man1/plyc.1")
COMPLETION = Path("share/bash-completion/completions/plyc")

# What the parsers do not say: the synopsis's shape, the tracer, the files.
NAME = "plyc \\- compile ply, bpftrace and argdist tracing scripts into static tracers"
DESCRIPTION = (
    "plyc compiles a Linux tracing script into one static executable: CO-RE BPF C and a small C loader, "
    "built with clang against libbpf. Copy that file to the machine to trace and run it there; that "
    "machine needs no Python, LLVM, compiler or kernel headers. plyc reads ply's scripts (.ply), "
    "bpftrace's (.bt) and bcc argdist's command lines.")
TRACER = (
    "Every tracer takes the same options: -c CMD (trace while CMD runs), -p PID, -d SECONDS, "
    "-f text|json, -o FILE, -k (keep going when events are lost), -v, --metrics [ADDR:]PORT, "
    "--metrics-prefix NAME, --btf FILE, --list (what the probes attach to here), --dry-run (load, "
    "verify, attach, detach, exit), --info (what of the kernel the tracer uses), -h, --version, and the "
    "script's arguments; a bpftrace script's tracer also -q (no \"Attaching N probes...\") and the "
    "script's named options. The tracer's -h lists them with what each does.")
# (tests/test_manpage.py holds TRACER to a tracer's -h)
FILES = [("~/.cache/plyc", "the compiled runtimes, sysroots, musl libraries and plyc run's tracers "
          "($XDG_CACHE_HOME/plyc where set)")]
SEE_ALSO = "bpftrace(8), ply(1), bpftool(8)"


def _roff(text: str) -> str:
    """Text safe in roff: backslashes doubled, a leading dot or quote escaped."""
    out = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + out if out.startswith((".", "'")) else out


def _opt_text(action: argparse.Action) -> str:
    """`-o OUT, --out OUT` as the help shows an option."""
    if not action.option_strings:
        return action.metavar or action.dest
    metavar = ""
    if action.nargs != 0:
        if action.choices is not None and not action.metavar:
            metavar = "{" + ",".join(map(str, action.choices)) + "}"
        else:
            metavar = action.metavar or action.dest.upper()
    return ", ".join(f"{o} {metavar}".rstrip() for o in action.option_strings)


def _help(action: argparse.Action) -> str:
    text = action.help or ""
    if "%(" in text:
        text = text % {**vars(action), "prog": "plyc"}
    return text


def _breakable(text: str) -> str:
    """roff text whose choice lists ({a,b,...}) may break after a comma
    (troff's \\: break point): as one word, one can be wider than the page."""
    return text.replace(",", ",\\:")


def _options(p: argparse.ArgumentParser) -> list:
    return [a for a in p._actions if a.help != argparse.SUPPRESS and not isinstance(a, argparse._SubParsersAction)]


def _subparsers(ap: argparse.ArgumentParser) -> dict:
    return dict(ap.commands)


def _command_help(ap: argparse.ArgumentParser) -> dict:
    """name -> the one-line help of each command, as the top help lists them."""
    for a in ap._actions:
        if isinstance(a, argparse._SubParsersAction):
            return {c.dest: c.help or "" for c in a._choices_actions}
    return {}


def man_page(ap: argparse.ArgumentParser, version: str) -> str:
    lines = [f'.TH PLYC 1 "" "plyc {version}" "User Commands"',
             ".ad l",       # left-aligned: the options' choices are long words
             ".SH NAME", NAME,
             ".SH SYNOPSIS",
             ".B plyc", "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]", ".br",
             ".B plyc", "\\fISCRIPT\\fR [\\fIARGS\\fR]",
             ".SH DESCRIPTION", _roff(DESCRIPTION),
             ".PP", _roff(ap.epilog or ""),
             ".SH OPTIONS"]
    for a in _options(ap):
        lines += [".TP", f"\\fB{_breakable(_roff(_opt_text(a)))}\\fR", _roff(_help(a))]
    lines.append(".SH COMMANDS")
    helps = _command_help(ap)
    for name, p in _subparsers(ap).items():
        lines += [".SS", f"\\fBplyc {name}\\fR \\- {_roff(helps.get(name, ''))}"]
        usage = p.format_usage().strip()
        if usage.startswith("usage: "):
            usage = usage[len("usage: "):]
        lines += [".PP", _breakable(_roff(" ".join(usage.split())))]     # filled: a usage line is long
        if p.description:
            lines += [".PP", _roff(p.description)]
        for a in _options(p):
            if a.dest in ("help",):
                continue
            lines += [".TP", f"\\fB{_breakable(_roff(_opt_text(a)))}\\fR", _roff(_help(a))]
    lines += [".SH THE TRACER'S OPTIONS", _roff(TRACER),
              ".SH FILES"]
    for path, what in FILES:
        lines += [".TP", f"\\fI{_roff(path)}\\fR", _roff(what)]
    lines += [".SH SEE ALSO", _roff(SEE_ALSO),
              ".PP", _roff("The documentation of the source: README.md and docs/usage.md.")]
    return "\n".join(lines) + "\n"


# --- bash completion

def _words(actions) -> list:
    return sorted(o for a in actions for o in a.option_strings)


def _choices(ap: argparse.ArgumentParser) -> dict:
    """option -> its choices, for every option that has them."""
    out = {}
    for p in [ap, *_subparsers(ap).values()]:
        for a in _options(p):
            if a.choices is not None:
                for o in a.option_strings:
                    out[o] = sorted(map(str, a.choices))
    return out


def completion(ap: argparse.ArgumentParser, providers: list) -> str:
    """A bash completion function: commands, each command's options, the
    values of options with choices, files for scripts, and probes for
    `plyc list` (through `plyc list` itself, so the machine's own)."""
    cmds = _subparsers(ap)
    per_cmd = "\n".join(f"\t\t{name}) opts=\"{' '.join(_words(_options(p)))}\" ;;" for name, p in cmds.items())
    choices = "\n".join(f"\t\t{o}) _plyc_reply compgen -W \"{' '.join(c)}\" -- \"$cur\"; return ;;"
                        for o, c in sorted(_choices(ap).items()))
    files_after = " ".join(sorted({o for p in [ap, *cmds.values()] for a in _options(p) if a.nargs != 0
                                   and a.choices is None and a.option_strings and (a.metavar or "").upper() in
                                   ("FILE", "OUT", "OUTPUT", "DIR", "PATH")
                                   for o in a.option_strings}))
    return f"""# bash completion for plyc (written by plyc/manpage.py from plyc's argument parsers)
_plyc_probes()
{{
	# $1: the word so far, ':' and all (bash splits words at ':')
	local word=$1 IFS=$' \\t\\n'      # the caller's IFS is a newline
	if [[ $word != *:* ]]; then
		compgen -W "{' '.join(f'{p}:' for p in providers)}" -- "$word"
		return
	fi
	plyc list "$word*" 2>/dev/null
}}

_plyc_reply()
{{
	# COMPREPLY += the lines "$@" prints, one reply each: a file name
	# with a space or a '*' kept whole, never split or globbed
	mapfile -t -O "${{#COMPREPLY[@]}}" COMPREPLY < <("$@")
}}

_plyc()
{{
	local cur prev cmd= opts i line
	COMPREPLY=()
	cur=${{COMP_WORDS[COMP_CWORD]}}
	prev=${{COMP_WORDS[COMP_CWORD-1]}}
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${{COMP_WORDS[i]}} in
		{'|'.join(cmds)}) cmd=${{COMP_WORDS[i]}}; break ;;
		esac
	done
	case $prev in
{choices}
		{'|'.join(files_after.split()) or '--no-such-option'}) compopt -o filenames 2>/dev/null; _plyc_reply compgen -f -- "$cur"; return ;;
	esac
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			_plyc_reply compgen -W "{' '.join(_words(_options(ap)))}" -- "$cur"
		else
			compopt -o filenames 2>/dev/null
			_plyc_reply compgen -W "{' '.join(cmds)}" -- "$cur"
			_plyc_reply compgen -f -- "$cur"
		fi
		return
	fi
	case $cmd in
{per_cmd}
	esac
	if [[ $cur == -* ]]; then
		_plyc_reply compgen -W "$opts" -- "$cur"
	elif [[ $cmd == list ]]; then
		# the pattern as typed, past bash's split at ':'; the replies
		# without the part before the last ':', which bash keeps
		line=${{COMP_LINE:0:COMP_POINT}}
		cur=${{line##*[[:space:]]}}
		cur=${{cur#[\\'\\"]}}
		local pre=${{cur%"${{cur##*:}}"}}
		_plyc_reply _plyc_probes "$cur"
		COMPREPLY=("${{COMPREPLY[@]#"$pre"}}")
		# a script whose probes are listed (plyc list trace.bt), in its folder;
		# quoted as a file name where no probe's reply (tracepoint:) is
		# among them, whose ':' readline would quote too
		if [[ $cur != *:* ]]; then
			[[ ${{#COMPREPLY[@]}} -eq 0 ]] && compopt -o filenames 2>/dev/null
			_plyc_reply compgen -f -X '!*.bt' -- "$cur"
			_plyc_reply compgen -f -X '!*.ply' -- "$cur"
			_plyc_reply compgen -d -- "$cur"
		fi
		[[ ${{#COMPREPLY[@]}} -eq 1 && ${{COMPREPLY[0]}} == *: ]] && compopt -o nospace 2>/dev/null
	else
		compopt -o filenames 2>/dev/null
		_plyc_reply compgen -f -- "$cur"
	fi
}}
complete -F _plyc plyc
"""


def outputs() -> dict:
    """path (under the repository) -> its text, as the parsers say now."""
    from . import __version__
    from .cli import parser
    from .providers.listing import LISTERS
    ap = parser()
    return {MAN_PAGE: man_page(ap, __version__), COMPLETION: completion(ap, list(LISTERS))}


def main(argv=None) -> int:
    """Write the files into the checkout (or the folder given)."""
    argv = sys.argv[1:] if argv is None else argv
    base = Path(argv[0]) if argv else ROOT
    for path, text in outputs().items():
        (base / path).parent.mkdir(parents=True, exist_ok=True)
        (base / path).write_text(text)
        print(base / path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
