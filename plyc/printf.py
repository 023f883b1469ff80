"""printf format strings: parsed at compile time, checked against the
argument types, and turned into one C conversion per argument for the loader."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

INT_MAX = (1 << 31) - 1
# The conversions and C's length modifiers a format may hold (the longer
# spellings first, as the pattern tries them in order): d i o u x X c s p v;
# r rx rh (a length-carrying buffer, bpftrace's buf()); gr (bpftrace 0.27's
# GFP flags by name).
CONVERSIONS = ("d", "i", "o", "u", "x", "X", "c", "s", "p", "v", "gr", "rx", "rh", "r")
LENGTHS = ("hh", "h", "ll", "l", "z", "j", "t")
CONV = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d+|\*)?(?:\.(?P<prec>\d+|\*))?"
                  rf"(?P<len>{'|'.join(LENGTHS)})?(?P<conv>%|{'|'.join(CONVERSIONS)})")


@dataclass
class Conv:
    text: str          # the conversion as written
    flags: str
    width: Optional[str]
    prec: Optional[str]
    conv: str          # d i o u x X c s p v, r rx rh (a length-carrying buffer, bpftrace's buf()),
                       # gr (bpftrace 0.27's GFP flags by name)
    length: str = ""   # C's length modifier as written: hh h l ll z j t
    # The bits of an integer d i o u x X prints: 64, or C's for its length
    # (bpftrace's printf is C's: %d prints an int, %lld a long long).
    bits: int = 64
    null_p: str = "0x0"   # what %p prints for 0
    # %s of a string writes its control characters as \xNN (the runtime's
    # plyc_text_escape: ply never writes them raw, it dumps such a string
    # in hex); bpftrace 0.27 writes them as they are
    escape: bool = True

    def use_c_lengths(self):
        if self.conv in "diouxX":
            self.bits = {"hh": 8, "h": 16, "": 32}.get(self.length, 64)

    def use_bpftrace_flags(self):
        """bpftrace 0.27's printf (its own formatter, not C's) takes a
        precision and the ' ' flag and ignores them: `%.2s` prints the whole
        string, `%.3d` of 7 is `7`, `% d` of 4 is `4`; its %p of 0 is `0`.
        (0.17 refuses all three.) Its %s writes a string's bytes as they
        are, control characters too."""
        self.prec = None
        self.flags = self.flags.replace(" ", "")
        self.null_p = "0"
        self.escape = False


class FormatError(Exception):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


def parse(fmt: str) -> list:
    """Literal strings and Conv objects, in order."""
    nul = fmt.find("\0")
    if nul >= 0:
        # C's printf stops at it: what follows would vanish without a word.
        raise FormatError("a NUL character (\\0) in a format string: the rest of it would not be printed", nul)
    parts: list = []
    pos = 0
    lit = ""
    while pos < len(fmt):
        i = fmt.find("%", pos)
        if i < 0:
            lit += fmt[pos:]
            break
        lit += fmt[pos:i]
        m = CONV.match(fmt, i)
        if not m:
            if i + 1 == len(fmt):
                raise FormatError("the format ends with a lone '%'; write %% for a percent sign", i)
            # Up to the conversion letter (or the first character that can't be in one).
            end = i + 1
            while end < len(fmt) and fmt[end] in "-+ #0123456789.*hljzt":
                end += 1
            bad = fmt[i:end + 1]
            shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in bad)
            hint = "" if bad[-1].isalpha() else "; write %% for a percent sign"
            raise FormatError(f"invalid conversion '{shown}' in format string{hint}", i)
        if m["conv"] == "%":
            lit += "%"
        else:
            if "*" in (m["width"] or "") or "*" in (m["prec"] or ""):
                raise FormatError("'*' widths are not supported in formats", i)
            # the C library counts what it writes in an int: a larger field
            # is no text it can write (gcc refuses it, printf fails)
            for what, digits in (("width", m["width"]), ("precision", m["prec"])):
                if digits and int(digits) > INT_MAX:
                    raise FormatError(f"the {what} of '{m.group(0)}' is more than {INT_MAX} (C's INT_MAX), "
                                      "the most the C library can write", i)
            if m["conv"].startswith("r") and m.group(0) != "%" + m["conv"]:
                raise FormatError(f"'%{m['conv']}' takes no flags, width, precision or length", i)
            if lit:
                parts.append(lit)
                lit = ""
            parts.append(Conv(m.group(0), m["flags"], m["width"], m["prec"], m["conv"], m["len"] or ""))
        pos = m.end()
    if lit:
        parts.append(lit)
    return parts


# Integers the tracer prints as text it makes (bpftrace's username,
# macaddr(), strftime(), strerror(), signal_name(), bool and enum values:
# runtime-c/values/btvalues.c).
TEXT_FMTS = ("username", "mac", "strftime", "errno", "signal", "syscall", "bool", "enum", "cgroup_path")


def accepts(conv: str, typ) -> bool:
    """Whether a value of `typ` may be printed with this conversion."""
    if conv.startswith("r"):
        return typ.kind == "buf" and typ.sized
    if conv == "gr":
        return typ.kind == "int"
    if conv == "v":
        return typ.kind in ("int", "str", "buf", "inet", "usym", "stack")
    if conv == "s":
        # a tuple (bpftrace 0.27's) as print() writes it
        return typ.kind in ("str", "buf", "inet", "usym", "tuple") or typ.kind == "stack" or \
            (typ.kind == "int" and typ.denotes in ("sym",) + TEXT_FMTS)
    if conv in "diouxXcp":
        return typ.kind == "int"
    return False
