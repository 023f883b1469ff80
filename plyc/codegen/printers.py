"""The loader's side of output events: one C function per printf/print call
site, with a literal format per conversion so the C compiler checks them."""
from __future__ import annotations

from .. import printf as P
from .. import types as T
from .cescape import c_string
from .resources import EventRes, Resources


# Room for the trailer of a cut string in printf's text (plyc_str_text cuts
# a longer trailer there).
TRAILER_ROOM = 64


def rt_kind(t, in_hex: bool = False) -> str:
    """The runtime's enum plyc_kind name of t (in_hex: the output style shows
    this integer as an address; a pointer is one)."""
    if t.kind == "int" and not t.denotes and (in_hex or t.pointee is not None):
        return "PLYC_K_HEX"
    if t.kind == "int":
        return {"": "PLYC_K_INT", "time": "PLYC_K_TIME",
                "walltime": "PLYC_K_WALLTIME", "sym": "PLYC_K_SYM",
                # bpftrace's values the tracer prints as text (runtime-c/values/btvalues.c)
                "username": "PLYC_K_USERNAME", "mac": "PLYC_K_MAC",
                "strftime": "PLYC_K_STRFTIME", "errno": "PLYC_K_ERRNO", "signal": "PLYC_K_SIGNAL",
                "syscall": "PLYC_K_SYSCALL", "cgroup_path": "PLYC_K_CGROUP_PATH",
                "bool": "PLYC_K_BOOL", "enum": "PLYC_K_ENUM"}[t.denotes]
    if t.kind == "stack" and t.user:
        return "PLYC_K_USTACK"
    if t.kind == "buf" and t.sized:
        return "PLYC_K_BUF"
    return {"str": "PLYC_K_STR", "buf": "PLYC_K_MEM", "inet": "PLYC_K_INET", "usym": "PLYC_K_USYM",
            "stack": "PLYC_K_STACK", "tuple": "PLYC_K_TUPLE"}[t.kind]


def rt_width(t) -> int:
    """struct plyc_type's width of t: a stack's frame limit | its mode << 8;
    a strftime value's format number; an enum's (plyc_rt.enums)."""
    if t.kind == "stack":
        return t.frames | T.STACK_MODES[t.mode] << 8
    if t.kind == "str":
        return int(t.cut)     # PLYC_STR_CUT
    return {"strftime": t.format_index, "cgroup_path": t.format_index, "enum": t.enum_index}.get(t.denotes, 0)


def type_init(t, pad: int = 0, in_hex: bool = False) -> str:
    """The initializer of the runtime's struct plyc_type for t, padded to
    `pad` columns, in hex if `in_hex` (the output style's: plyc/sema/looks.py);
    a tuple's lists its members (struct plyc_field: type, offset and a
    record's member name)."""
    if t.kind != "tuple":
        return f"{{ {rt_kind(t, in_hex)}, {t.size}, {int(t.signed)}, {pad or rt_width(t)}, 0, NULL }}"
    offsets, _ = T.tuple_layout(t.items)
    names = [c_string(n.encode()) for n in t.names] or ["NULL"] * len(t.items)
    members = ", ".join(f"{{ {type_init(i)}, {off}, {n} }}" for i, off, n in zip(t.items, offsets, names))
    fields = f"(const struct plyc_field[]){{ {members} }}" if t.items else "NULL"
    # width: PLYC_TUPLE_ARRAY, PLYC_TUPLE_RECORD (plyc_rt.h)
    width = {"array": 1, "record": 2}.get(t.denotes, 0)
    return f"{{ PLYC_K_TUPLE, {t.size}, 0, {width}, {len(t.items)}, {fields} }}"


def type_literal(t, look: tuple = (0, False)) -> str:
    return f"&(const struct plyc_type){type_init(t, *look)}"


def shown(er: EventRes) -> list:
    """(field, type, (print width, hex)) of each argument of the event."""
    n = len(er.event.arg_types)
    looks = zip(er.event.arg_widths or [0] * n, er.event.arg_hex or [False] * n)
    return list(zip(er.fields, er.event.arg_types, looks))


def conversion(conv: P.Conv, field, typ, look: tuple = (0, False)) -> list:
    """C statements printing one argument with one printf conversion: the
    runtime's plyc_fprintf and plyc_snprintf, which keep a failure (a width
    whose text passes INT_MAX bytes) for the tracer to stop on."""
    ref = f"e->{field.name}"
    # The flags C defines for the conversion, the others dropped as bpftrace
    # ignores them (gcc refuses '%#s', '%+u', '%#d'...): '#' for o x X, '+'
    # and ' ' for d i, '-' for all, '0' for the numbers.
    keep = "-+ 0" if conv.conv in "di" else "-#0" if conv.conv in "oxX" else "-0" if conv.conv == "u" else "-"
    flags = "".join(f for f in dict.fromkeys(conv.flags) if f in keep)     # once each (gcc: "repeated '0' flag")
    # C ignores '0' with a precision or '-'; say so to no one (gcc would).
    if "0" in flags and (conv.prec is not None or "-" in flags or conv.conv in "sc"):
        flags = flags.replace("0", "")
    if "+" in flags:     # C ignores ' ' beside '+' (gcc refuses `%+ d`)
        flags = flags.replace(" ", "")
    # A width and a precision are `*` arguments, through a function the
    # compiler cannot see into: it would refuse a field whose text it can
    # tell passes INT_MAX bytes (-Wformat-overflow), which the tracer checks
    # as it writes instead (plyc_fprintf).
    spec = flags + ("*" if conv.width else "")
    w = f"plyc_fmt_int({conv.width}), " if conv.width else ""
    prec, p = (".*", f"plyc_fmt_int({conv.prec}), ") if conv.prec is not None else ("", "")
    if conv.conv.startswith("r"):
        # bpftrace's %r (printable bytes, \xNN), %rx (all \xNN), %rh (hex, spaced)
        return [f"plyc_bt_buf_format(fp, &{ref}, {typ.size}, '{(conv.conv + ' ')[1]}');"]
    if conv.conv == "gr":
        # bpftrace 0.27's GFP flags by name; a width pads the text
        return ["{",
                "\tchar gfp[PLYC_GFP_TEXT_LEN];",
                "",
                f'\tplyc_fprintf(fp, "%{spec}s", {w}plyc_bt_gfp_text((unsigned long long){ref}, gfp, sizeof(gfp)));',
                "}"]
    if conv.conv == "s" and typ.kind == "tuple" and conv.width:
        # a width pads the whole text, as bpftrace 0.27's
        return [f"plyc_print_value_padded(fp, {int('-' in flags)}, plyc_fmt_int({conv.width}), "
                f"{type_literal(typ, look)}, &{ref});"]
    if conv.conv == "v" or (conv.conv == "s" and typ.kind in ("stack", "tuple")):
        return [f"plyc_print_value(fp, {type_literal(typ, look)}, &{ref});"]
    if conv.conv == "s" and typ.kind == "str" and typ.cut:
        # a string cut where it was read: its text and the trailer, padded
        # and escaped as one (bpftrace 0.27 adds the trailer before either)
        lines = conversion(conv, field, T.Str(typ.size + TRAILER_ROOM), look)
        lines = [ln.replace(f"e->{field.name}", "cut") for ln in lines]
        return ["{", f"\tchar cut[{typ.size + TRAILER_ROOM}];", "",
                f"\tplyc_str_text((const char *)e->{field.name}, {typ.size}, 1, cut, sizeof(cut));"] + \
            ["\t" + ln for ln in lines] + ["}"]
    if conv.conv == "s":
        if typ.kind in ("str", "buf"):
            n = f"strnlen((const char *){ref}, {typ.size})"
            if conv.prec is not None:
                # (%.0s: no comparison of an unsigned length with 0, which gcc refuses)
                n = f"({n} < {conv.prec} ? {n} : {conv.prec})" if int(conv.prec) else "0"
            if conv.escape:
                # untrusted text: its control characters as \xNN (4 bytes each)
                return ["{",
                        f"\tchar esc[4 * {typ.size} + 1];",
                        "",
                        f'\tplyc_fprintf(fp, "%{spec}s", {w}plyc_printf_text((const char *){ref}, {n}, esc, sizeof(esc)));',
                        "}"]
            return [f'plyc_fprintf(fp, "%{spec}.*s", {w}(int){n}, (const char *){ref});']
        if typ.kind == "usym":
            return ["{",
                    "\tchar sym[PLYC_KSYM_LEN];",
                    f'\tplyc_fprintf(fp, "%{spec}{prec}s", {w}{p}plyc_usym_text({ref}, sym, sizeof(sym)));',
                    "}"]
        if typ.kind == "inet":
            return ["{",
                    "\tchar addr[PLYC_INET_LEN];",
                    f'\tplyc_fprintf(fp, "%{spec}{prec}s", {w}{p}plyc_inet_text({ref}, addr, sizeof(addr)));',
                    "}"]
        if typ.denotes in P.TEXT_FMTS:
            return ["{",
                    "\tchar text[PLYC_VALUE_TEXT_LEN];",
                    f'\tplyc_fprintf(fp, "%{spec}{prec}s", {w}{p}plyc_value_text({type_literal(typ, look)}, &{ref}, text, sizeof(text)));',
                    "}"]
        if typ.kind == "int" and typ.denotes != "sym":
            # bpftrace 0.27's %s of an integer: its number, a pointer's in hex
            if typ.pointee is not None:
                number = f'"0x%llx", (unsigned long long){ref}'
            else:
                plus = "+" if typ.signed and "+" in conv.flags else ""      # 0.27's %+s of 5: +5
                number = f'"%{plus}ll{"d" if typ.signed else "u"}", ' \
                         f'({"long long" if typ.signed else "unsigned long long"}){ref}'
            return ["{",
                    "\tchar num[24];",
                    "",
                    f"\tplyc_snprintf(num, sizeof(num), {number});",
                    f'\tplyc_fprintf(fp, "%{spec}s", {w}num);',
                    "}"]
        return ["{",
                "\tchar sym[256];",
                f'\tplyc_fprintf(fp, "%{spec}s", {w}plyc_ksym_text({ref}, sym, sizeof(sym)));',
                "}"]
    # An integer cut to the conversion's C length first (bpftrace's %d: an int).
    narrow = {64: "", 32: "int", 16: "short", 8: "char"}[conv.bits]
    if conv.conv in "di":
        cut = f"({'signed ' if narrow == 'char' else ''}{narrow})" if narrow else ""
        return [f'plyc_fprintf(fp, "%{spec}{prec}lld", {w}{p}(long long){cut}{ref});']
    if conv.conv in "ouxX":
        cut = f"(unsigned {narrow})" if narrow else ""
        return [f'plyc_fprintf(fp, "%{spec}{prec}ll{conv.conv}", {w}{p}(unsigned long long){cut}{ref});']
    if conv.conv == "c":
        return [f'plyc_fprintf(fp, "%{spec}c", {w}(int){ref});']
    if conv.conv == "p":
        # the width pads the whole text, 0x too (C's %p's)
        return ["{",
                "\tchar ptr[24];",
                "",
                f'\tif ({ref})',
                f'\t\tplyc_snprintf(ptr, sizeof(ptr), "0x%llx", (unsigned long long){ref});',
                "\telse",
                f'\t\tplyc_snprintf(ptr, sizeof(ptr), "%s", {c_string(conv.null_p)});',
                f'\tplyc_fprintf(fp, "%{spec.replace("0", "")}s", {w}ptr);',
                "}"]
    raise AssertionError(conv.conv)


def printf_body(er: EventRes) -> list:
    return ["FILE *fp = plyc_text_begin();", "", "if (!fp)", "\treturn;"] + formatted(er) + \
        ["plyc_text_end(fp);"]


def formatted(er: EventRes, parts=None) -> list:
    """The statements writing the event's format (or parts) with its arguments to fp."""
    lines = []
    fields = iter(shown(er))
    for part in er.event.parts if parts is None else parts:
        if isinstance(part, str):
            lines.append(f"fputs({c_string(part)}, fp);")
        else:
            field, typ, look = next(fields)
            lines += conversion(part, field, typ, look)
    return lines


def acted_body(er: EventRes, act: str) -> list:
    """cat() and system(): the formatted text, then what the tracer does with it."""
    return ["FILE *fp = plyc_bt_act_begin();", "", "if (!fp)", "\treturn;"] + formatted(er) + \
        [f"plyc_bt_act_end(fp, {act});"]


def diag_body(er: EventRes, res: Resources) -> list:
    """errorf() and warnf(): a line on stderr after the call's place in the
    script, as bpftrace 0.27 prints it ("t.bt:8:3-22: ERROR: text"; a call over
    several lines: "t.bt:2-3: ...")."""
    sp = er.event.span
    where = f"{sp.line}:{sp.col}-{sp.end_col}" if sp.end_line == sp.line else f"{sp.line}-{sp.end_line}"
    level = "ERROR" if er.event.kind == "errorf" else "WARNING"
    parts = list(er.event.parts)
    if parts and isinstance(parts[-1], str) and parts[-1].endswith("\n"):
        parts[-1] = parts[-1][:-1]      # one newline ends the line, the format's or ours
        parts = parts if parts[-1] else parts[:-1]
    body = formatted(er, parts)
    # a one-liner (-e) and `-`'s script are "stdin" to bpftrace, in its messages as here
    script = "stdin" if res.script in ("<command-line>", "<stdin>") else res.script
    return ["FILE *fp = stderr;", "", "fflush(plyc_rt.out);",
            f"fputs({c_string(f'{script}:{where}: {level}: ')}, fp);"] + body + ['fputc(\'\\n\', fp);']


def print_body(er: EventRes) -> list:
    """print(a, b, ...): its values to the style's print (plyc_style.h),
    which chooses their format, text or JSON."""
    pairs = shown(er)
    return ["const struct plyc_type *t[] = { " + ", ".join(type_literal(t, w) for f, t, w in pairs) + " };",
            "const void *v[] = { " + ", ".join(f"&e->{f.name}" for f, t, w in pairs) + " };", "",
            f"plyc_print(plyc_rt.out, t, v, {len(pairs)});"]


def event_body(er: EventRes, res: Resources) -> list:
    return ["(void)e;"] + _event_body(er, res)


def _event_body(er: EventRes, res: Resources) -> list:
    kind = er.event.kind
    if kind == "printf":
        return printf_body(er)
    if kind == "print":
        return print_body(er)
    if kind in ("cat", "system"):
        return acted_body(er, f"plyc_bt_{kind}")
    if kind in ("errorf", "warnf"):
        return diag_body(er, res)
    if kind == "exit":
        return ["plyc_request_exit((long long)e->a0);"]
    if kind == "unwatch":
        return ["plyc_watchpoint_unwatch((uint64_t)e->a0);"]
    if kind == "join":
        sep, size = er.event.parts
        field = er.fields[0].name
        count = er.event.arg_types[0].size // size
        return [f"const char *args[{count}];", "int n = 0;", "",
                f"while (n < {count} && e->{field}[n * {size}]) {{",
                f"\targs[n] = (const char *)&e->{field}[n * {size}];", "\tn++;", "}",
                f"plyc_bt_join(plyc_rt.out, args, n, {c_string(sep)});"]
    if kind == "time":
        return [f"plyc_bt_time(plyc_rt.out, {c_string(er.event.parts[0])});"]
    index = res.maps.index(er.map)
    if kind == "printmap" and er.event.parts:      # print(@map, top, div)
        top, div = er.event.parts
        return [f"plyc_map_dump_top(&maps[{index}], {top}, {div});"]
    if kind == "printmap":
        return [f"plyc_map_dump(&maps[{index}]);"]
    if kind == "zero":
        return [f"plyc_map_zero(&maps[{index}]);"]
    if kind == "clear":
        return [f"plyc_map_clear(&maps[{index}]);"]
    raise AssertionError(kind)
