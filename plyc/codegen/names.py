"""C names for what the script names: maps after the script's maps (`@start`
and `start` -> start, `@` -> at), programs after what they trace
(sys_enter_read, vfs_read, kretprobe_vfs_read, fentry_vfs_read). All share
the BPF object's one namespace of globals, and none may be taken by C, libbpf,
plyc or the locals cgen generates. The kernel shows only the first 15
characters of a map's or program's name (BPF_OBJ_NAME_LEN), so those are kept
unique too: `bpftool map` tells every map apart."""
from __future__ import annotations

import re

KERNEL_NAME_MAX = 15

C_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if inline
    int long register restrict return short signed sizeof static struct switch typedef union unsigned
    void volatile while _Bool _Complex _Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn
    _Static_assert _Thread_local asm typeof""".split())

# Names plyc.bpf.h, libbpf's bpf_helpers.h/bpf_core_read.h/usdt.bpf.h and the
# generated programs declare without a reserved prefix (below).
TAKEN = frozenset("""
    bool true false NULL SEC likely unlikely barrier barrier_var offsetof container_of
    user_pt_regs pt_regs LICENSE main ctx regs args scratch slot
    LIBBPF_PIN_NONE LIBBPF_PIN_BY_NAME TRI_NO TRI_YES TRI_MODULE""".split())
# The ELF sections the object's programs and license are in (the providers'
# Provider.section): clang names each section's symbol after it, and a
# global of that name is a symbol defined twice.
SECTIONS = frozenset("""
    license kprobe kretprobe uprobe uretprobe usdt tracepoint raw_tp perf_event fentry fexit
    iter""".split())
# C library functions clang knows as builtins: a program or map of their
# name is an incompatible redeclaration (malloc, memcpy, strlen: kernels and
# libraries have functions of these names). Math functions with f and l forms.
_MATH = """acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh erf erfc exp exp2 expm1
    fabs fdim floor fma fmax fmin fmod frexp hypot ilogb ldexp lgamma llrint llround log log10 log1p
    log2 logb lrint lround modf nan nearbyint nextafter nexttoward pow remainder remquo rint round
    scalbln scalbn sin sinh sqrt tan tanh tgamma trunc""".split()
LIBC = frozenset("""
    abort abs labs llabs div ldiv lldiv exit _Exit atexit at_quick_exit quick_exit getenv system
    malloc calloc realloc free aligned_alloc alloca atoi atol atoll atof strtol strtoll strtoul
    strtoull strtod strtof strtold rand srand qsort bsearch
    memcpy memmove memset memcmp memchr memccpy mempcpy strcpy strncpy strcat strncat strcmp strncmp
    strcoll strxfrm strchr strrchr strspn strcspn strpbrk strstr strtok strlen strnlen strerror strdup
    strndup stpcpy stpncpy strcasecmp strncasecmp strlcpy strlcat bzero bcopy bcmp index rindex
    printf fprintf sprintf snprintf vprintf vfprintf vsprintf vsnprintf scanf fscanf sscanf vscanf
    vfscanf vsscanf putchar puts fputc fputs putc getchar getc fgetc fgets gets fopen fclose fread
    fwrite fflush fseek ftell rewind remove rename tmpfile tmpnam perror
    isalnum isalpha isblank iscntrl isdigit isgraph islower isprint ispunct isspace isupper isxdigit
    tolower toupper isascii toascii iswalnum iswalpha iswdigit iswspace towlower towupper
    wcslen wcschr wcscmp wcsncmp wmemchr wmemcmp wmemcpy wmemmove
    setjmp longjmp sigsetjmp siglongjmp _setjmp _longjmp savectx getcontext vfork fork _exit
    signal raise clock time difftime mktime strftime asctime ctime gmtime localtime
    va_start va_end va_copy main""".split()) | frozenset(m + s for m in _MATH for s in ("", "f", "l"))
RESERVED_PREFIXES = ("_", "plyc_", "PLYC_", "bpf_", "BPF_", "PT_REGS", "KERNEL_")
# cgen's locals: t1, key2, val3, p4, x5, agg6, ev7, b8, k9, f10, u11, d12, n13,
# c14 (loops.py), lookup1 (the IR's LookupLets), v_NAME.
LOCAL = re.compile(r"(?:t|key|val|p|x|agg|ev|b|k|f|u|d|n|c|lookup)\d+|v_\w*")


def identifier(text: str) -> str:
    """`text` as a C identifier: other characters become `_`, runs of them
    one, none at either end."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")
    name = re.sub(r"__+", "_", name)
    return name if name and not name[0].isdigit() else "n_" + name if name else ""


class Namespace:
    """Hands out unique C names, in order: a name that is reserved, taken,
    or whose first 15 characters are, gets the first free `_2`, `_3`, ..."""

    def __init__(self, reserved=()):
        self.reserved = set(reserved)
        self.used: set = set()
        self.cut: set = set()

    def free(self, name: str, kernel: bool = True) -> bool:
        return bool(name) and name not in C_KEYWORDS and name not in TAKEN and name not in LIBC \
            and name not in SECTIONS \
            and name not in self.reserved \
            and not name.startswith(RESERVED_PREFIXES) and not LOCAL.fullmatch(name) \
            and name not in self.used and not (kernel and name[:KERNEL_NAME_MAX] in self.cut)

    def claim(self, *candidates: str) -> str:
        """The first free candidate, else the first one with a number."""
        candidates = [c for c in candidates if c]
        for c in candidates:
            if self.free(c):
                return self._take(c)
        base = candidates[0] if candidates else "anon"
        if base.startswith(RESERVED_PREFIXES):
            base = "n_" + base          # no number makes such a name free
        for n in range(2, 1 << 16):
            suffix = f"_{n}"
            c = base[:KERNEL_NAME_MAX - len(suffix)] + suffix if len(base) + len(suffix) > KERNEL_NAME_MAX \
                else base + suffix
            if self.free(c):
                return self._take(c)
        raise AssertionError("no free name")

    def claim_c(self, name: str) -> str:
        """A name the kernel never sees (a static function)."""
        n = 1
        while not self.free(name if n == 1 else f"{name}_{n}", kernel=False):
            n += 1
        name = name if n == 1 else f"{name}_{n}"
        self.used.add(name)
        return name

    def _take(self, name: str) -> str:
        self.used.add(name)
        self.cut.add(name[:KERNEL_NAME_MAX])
        return name


def map_names(names: list, ns: Namespace) -> dict:
    """script name -> C name. Plain maps first: the script spells them as
    C would, `@` maps come after (`@x` next to a plain `x` is `at_x`)."""
    out = {}
    for name in sorted(names, key=lambda n: n.startswith("@")):
        if name.startswith("@"):
            base = identifier(name[1:])
            out[name] = ns.claim(base, identifier("at_" + name[1:])) if base else ns.claim("at")
        else:
            out[name] = ns.claim(identifier(name), "map_" + identifier(name))
    return out


def prog_candidates(provider, arg: str) -> list:
    """Names for a program of `provider` (a providers.Provider: how it
    names its programs) on `arg`, the most readable first."""
    if provider.prog_name:
        return [provider.prog_name]
    if not arg:
        return [identifier(provider.name)]
    last = identifier(re.split(r"[/:]", arg.rstrip("/:"))[-1]) if provider.name_last else ""
    full = identifier(f"{provider.name}_{arg}")
    if provider.name_prefixed:
        return [identifier(f"{provider.name}_{last}") if last else full, full]
    return [last, identifier(f"{provider.name}_{last}") if last else "", full]


def twin_candidates(section: str, prog_name: str, provider: str) -> list:
    """The fentry/fexit twin of a kprobe program: fentry_vfs_read,
    fexit_vfs_read (a name its provider prefixed loses that prefix)."""
    base = prog_name[len(provider) + 1:] if prog_name.startswith(provider + "_") else prog_name
    return [f"{section}_{base}", f"{section}_{prog_name}"]
