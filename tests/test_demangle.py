"""C++ names in user stacks and usym(), demangled as bpftrace demangles them
(bcc and blazesym print the C++ library's demangler's text; config
cpp_demangle, default true): the tracer's own Itanium demangler
(runtime-c/symbols/demangle.c, the tracer linking no libstdc++), driven
from C as tests/test_runtime_c.py drives the output runtime
(tests/c/test_demangle.c) and held to the C++ library's
abi::__cxa_demangle (tests/c/cxa_demangle.cc): on hand-picked names, on
every function of libstdc++ and of LLVM, and on damaged names (under
AddressSanitizer), where it either prints what the library prints or gives
up (the tracer then prints the mangled name), never something else. Then a
tracer's user stacks and usym() on a C++ program (tests/helpers/cxx_prog.cc),
against bpftrace 0.17 and 0.27."""
import glob
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from plyc.elfsyms import Elf
from test_runtime_c import CFLAGS
from test_tracer import build

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime-c"


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    """(ours, ours under AddressSanitizer and UBSan, the C++ library's)."""
    for cc in ("gcc", "g++"):
        if not shutil.which(cc):
            pytest.fail(f"{cc} is not installed (scripts/setup.sh installs it)")
    tmp = tmp_path_factory.mktemp("demangle")
    ours, asan, theirs = tmp / "ours", tmp / "asan", tmp / "theirs"
    srcs = [str(ROOT / "tests/c/test_demangle.c"), str(RUNTIME / "symbols/demangle.c")]
    subprocess.run(["gcc", *CFLAGS, f"-I{RUNTIME}", *srcs, "-o", str(ours)], check=True)
    subprocess.run(["gcc", *CFLAGS, "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    f"-I{RUNTIME}", *srcs, "-o", str(asan)], check=True)
    subprocess.run(["g++", "-O2", str(ROOT / "tests/c/cxa_demangle.cc"), "-o", str(theirs)], check=True)
    return str(ours), str(asan), str(theirs)


def demangle(exe: str, names: list, timeout=300) -> list:
    proc = subprocess.run([exe], input="".join(n + "\n" for n in names), capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout.splitlines()
    assert len(out) == len(names)
    return out


# (mangled, what the C++ library prints): nested names, templates and their
# literals, std:: abbreviations and substitutions, template parameters and
# packs (an empty one too, printed as the library prints it), constructors
# and destructors, operators, conversions, lambdas, local names, ABI tags,
# clones, special names, pointers to functions, arrays and members,
# ref-qualified methods, reference collapsing
CASES = [
    ('_ZN4plyc4demo7free_fnERSt3mapINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEiSt4lessIS7_ESaISt4pairIKS7_iEEEd',
     'plyc::demo::free_fn(std::map<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, int, std::less<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >, std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, int> > >&, double)'),
    ('_ZNK4plyc4demo3BoxIiE3runERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKSt6vectorIiSaIiEE.isra.0',
     'plyc::demo::Box<int>::run(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, std::vector<int, std::allocator<int> > const&) const [clone .isra.0]'),
    ('_ZNK4plyc4demo3BoxIiEeqERKS2_',
     'plyc::demo::Box<int>::operator==(plyc::demo::Box<int> const&) const'),
    ('_ZN12_GLOBAL__N_16hiddenEPFiPviEl',
     '(anonymous namespace)::hidden(int (*)(void*, int), long)'),
    ('_Z5twiceIiET_S0_',
     'int twice<int>(int)'),
    ('_ZNSt6vectorIiSaIiEE9push_backERKi',
     'std::vector<int, std::allocator<int> >::push_back(int const&)'),
    ('_ZNSt6vectorIiSaIiEEC2Ev',
     'std::vector<int, std::allocator<int> >::vector()'),
    ('_ZNSt6vectorIiSaIiEED1Ev',
     'std::vector<int, std::allocator<int> >::~vector()'),
    ('_ZNSsC1EPKcRKSaIcE',
     'std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string(char const*, std::allocator<char> const&)'),
    ('_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv',
     'std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::size() const'),
    ('_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc',
     'std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)'),
    ('_ZNKSt5ctypeIcE8do_widenEc',
     'std::ctype<char>::do_widen(char) const'),
    ('_ZNSt6vectorISt10unique_ptrIiSt14default_deleteIiEESaIS3_EE17_M_realloc_insertIJS3_EEEvN9__gnu_cxx17__normal_iteratorIPS3_S5_EEDpOT_',
     'void std::vector<std::unique_ptr<int, std::default_delete<int> >, std::allocator<std::unique_ptr<int, std::default_delete<int> > > >::_M_realloc_insert<std::unique_ptr<int, std::default_delete<int> > >(__gnu_cxx::__normal_iterator<std::unique_ptr<int, std::default_delete<int> >*, std::vector<std::unique_ptr<int, std::default_delete<int> >, std::allocator<std::unique_ptr<int, std::default_delete<int> > > > >, std::unique_ptr<int, std::default_delete<int> >&&)'),
    ('_ZZ4mainENKUlvE_clEv',
     'main::{lambda()#1}::operator()() const'),
    ('_ZZ4mainENKUliPKcE0_clEiS0_',
     'main::{lambda(int, char const*)#2}::operator()(int, char const*) const'),
    ('_ZZN4plyc3runEvE5count',
     'plyc::run()::count'),
    ('_ZN4plyc5Timer3getB5cxx11Ev',
     'plyc::Timer::get[abi:cxx11]()'),
    ('_ZN4plyc1AcviEv',
     'plyc::A::operator int()'),
    ('_ZN4plyc1AnwEm',
     'plyc::A::operator new(unsigned long)'),
    ('_ZN4plyc1AdlEPv',
     'plyc::A::operator delete(void*)'),
    ('_ZTVN4plyc4BaseE',
     'vtable for plyc::Base'),
    ('_ZTIN4plyc4BaseE',
     'typeinfo for plyc::Base'),
    ('_ZTSN4plyc4BaseE',
     'typeinfo name for plyc::Base'),
    ('_ZThn8_N4plyc7Derived3runEv',
     'non-virtual thunk to plyc::Derived::run()'),
    ('_ZGVZ4mainE1x',
     'guard variable for main::x'),
    ('_Z1fIJEiEvv',
     'void f<, int>()'),
    ('_Z1fI1AIiEJEEvv',
     'void f<A<int>>()'),
    ('_Z4sortIPiEvT_S1_',
     'void sort<int*>(int*, int*)'),
    ('_Z3maxIlLi3EEvv',
     'void max<long, 3>()'),
    ('_Z3getILb1EEvv',
     'void get<true>()'),
    ('_Z1fRA10_i',
     'f(int (&) [10])'),
    ('_Z1fPA10_KcRKA4_i',
     'f(char const (*) [10], int const (&) [4])'),
    ('_Z1fM1AFivE',
     'f(int (A::*)())'),
    ('_Z1fM1AKFivE',
     'f(int (A::*)() const)'),
    ('_Z1fM1Ai',
     'f(int A::*)'),
    ('_Z6invokeIRFviEJiEEvOT_DpOT0_',
     'void invoke<void (&)(int), int>(void (&)(int), int&&)'),
    ('_ZN4plyc4demo3BoxIiE4makeEmPKc.constprop.0.isra.0',
     'plyc::demo::Box<int>::make(unsigned long, char const*) [clone .constprop.0] [clone .isra.0]'),
    ('_Z4workv.cold',
     'work() [clone .cold]'),
    ('_ZNKRSt6vectorIiSaIiEE4sizeEv',
     'std::vector<int, std::allocator<int> >::size() const &'),
    ('_ZNO4plyc1A3getEv',
     'plyc::A::get() &&'),
    ('_Z1fIcEvPFT_vE',
     'void f<char>(char (*)())'),
    ('_ZN1AIiE1fIcEEviT_',
     'void A<int>::f<char>(int, char)'),
]

# what the tracer prints as the symbol table has it: no C++ name, and what
# the demangler does not know (an expression in a template argument,
# decltype, a vendor qualifier), damaged names
GIVES_UP = ["main", "_Z", "_Z1", "_Z3fo", "_ZN3fooE3", "_Z1fIXadL_Z1gvEEEvv", "_Z1fDTcl1gEE",
            "_Z1fU3fooi", "_Z1fI", "_Z3fooii.", "__Z3foov", "_ZNVVKS_3fooEv"]


def test_the_names_as_the_cxx_library_prints_them(tools):
    ours, _, theirs = tools
    names = [m for m, _ in CASES]
    assert demangle(theirs, names) == [t for _, t in CASES]    # the cases themselves
    assert demangle(ours, names) == [t for _, t in CASES]


def test_what_it_does_not_know_is_left_as_it_is(tools):
    ours, _, _ = tools
    assert demangle(ours, GIVES_UP) == ["?" + n for n in GIVES_UP]


def library_names() -> list:
    """The functions of libstdc++ and of an LLVM library (clang's), both on
    every machine that builds tracers: some 45,000 C++ names."""
    found = sorted(glob.glob("/usr/lib/*/libstdc++.so.6")) + sorted(glob.glob("/usr/lib/*/libLLVM-1*.so.1"))[:1]
    assert found, "no libstdc++ here"
    return sorted({n for path in found for n in Elf(path).functions() if n.startswith("_Z")})


def test_every_library_function_as_the_cxx_library_prints_it(tools):
    """Each name it demangles is the library's text; it gives up on few."""
    ours, _, theirs = tools
    names = library_names()
    mine, ref = demangle(ours, names), demangle(theirs, names)
    wrong = [(n, a, b) for n, a, b in zip(names, mine, ref) if not a.startswith("?") and a != b]
    assert not wrong, wrong[:5]
    given_up = sum(a.startswith("?") for a in mine)
    assert given_up < len(names) * 0.02, f"gave up on {given_up} of {len(names)}"


def reference(theirs: str, names: list) -> dict:
    """name -> the C++ library's text, in chunks; a name it loops on (its
    demangler never returns on some damaged names) is left out."""
    out = {}
    todo = [names[i:i + 500] for i in range(0, len(names), 500)]
    while todo:
        chunk = todo.pop()
        try:
            out.update(zip(chunk, demangle(theirs, chunk, timeout=20)))
        except subprocess.TimeoutExpired:
            if len(chunk) > 1:
                todo += [chunk[:len(chunk) // 2], chunk[len(chunk) // 2:]]
    return out


def test_damaged_names_never_crash_nor_differ(tools):
    """Names cut, changed and stretched (a fixed seed): no memory error, and
    an answer only where it is the library's."""
    _, asan, theirs = tools
    rnd = random.Random(30)
    alphabet = "_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz."
    base = [m for m, _ in CASES] + rnd.sample(library_names(), 1500)
    names = []
    for name in base:
        for _ in range(4):
            b = list(name)
            r = rnd.random()
            if r < 0.3:
                b = b[:rnd.randrange(2, len(b) + 1)]
            elif r < 0.7:
                for _ in range(rnd.randint(1, 3)):
                    b[rnd.randrange(2, len(b))] = rnd.choice(alphabet)
            else:
                i = rnd.randrange(2, len(b))
                b[i:i] = rnd.choice(alphabet) * rnd.randint(1, 40)
            names.append("".join(b))
    # deep and wide: the arena's and the depth's limits
    names += ["_Z" + "N" * 5000, "_Z1f" + "P" * 5000 + "i", "_Z1fI" + "I" * 3000, "_Z1f" + "S_" * 3000,
              "_Z1f" + "A1_" * 2000 + "i", "_Z1fIJ" * 500, "_ZZ" * 2000, "_Z1f" + "i" * 70]
    mine, ref = demangle(asan, names), reference(theirs, names)
    assert len(ref) > len(set(names)) * 0.99
    wrong = [(n, a, ref[n]) for n, a in zip(names, mine) if n in ref and not a.startswith("?") and a != ref[n]]
    assert not wrong, wrong[:5]



# a crafted ELF's symbols: template arguments that name themselves (T_ inside
# f's own arguments) made items() recurse until the stack overflowed, and
# find_pack() walk 2^64 paths (the tracer hung printing a stack)
SELF_NAMED = ["_Z1fIJT_T_EEvv", "_Z1fIJT_T_EEvT1_", "_Z1fIJT_T_T_T_EEvT_", "_Z1fI1AIT_T_EEvDpT_",
              "_Z1fI1AIT_T_T_T_EEvDpT_", "_Z1fIJJT_T_EEEvT_", "_Z1fI1AIT_T_EEvDpDpT_"]


def test_names_that_refer_to_themselves_give_up_at_once(tools):
    _, asan, _ = tools
    # the arena's, the depth's and the work's limits: each gives up, fast
    assert demangle(asan, SELF_NAMED, timeout=60) == ["?" + n for n in SELF_NAMED]

# --- a tracer's stacks and usym() on a C++ program

@pytest.fixture(scope="module")
def cxx_prog(tmp_path_factory) -> str:
    if not shutil.which("g++"):
        pytest.fail("g++ is not installed (scripts/setup.sh installs it)")
    out = tmp_path_factory.mktemp("cxx") / "cxx_prog"
    subprocess.run(["g++", "-O1", "-fno-omit-frame-pointer", "-fno-inline-small-functions", "-o", str(out),
                    str(ROOT / "tests/helpers/cxx_prog.cc")], check=True)
    return str(out)


# the program's own frames (ustack(6)): below main, libc's frames are the
# machine's (0.27 runs in a chroot with its own libc)
SCRIPT = """\
uprobe:{p}:cxx_leaf {{ @[ustack(6)] = count(); printf("%s\\n", usym(arg0)); }}
uprobe:{p}:cxx_done {{ print(@); clear(@); exit(); }}
"""
FRAMES = [r"cxx_leaf\+0",
          r"int twice<int>\(int\)\+\d+",
          r"plyc::demo::Box<int>::run\(std::__cxx11::basic_string<char, std::char_traits<char>, "
          r"std::allocator<char> > const&, std::vector<int, std::allocator<int> > const&\) const\+\d+",
          r"plyc::demo::Box<int>::make\(unsigned long, char const\*\)\+\d+",
          r"plyc::demo::Box<int>::operator==\(plyc::demo::Box<int> const&\) const\+\d+",
          r"plyc::demo::free_fn\(std::map<.*>&, double\)\+\d+"]
USYM = "(anonymous namespace)::hidden(int (*)(void*, int), long)"


def shape(stdout: str) -> tuple:
    """(the usym() lines, the stack's frames unindented, its count)."""
    lines = stdout.splitlines()
    usyms = [x for x in lines if x.startswith("(anonymous")]
    start = lines.index("@[")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("]: "))
    return usyms, [x.strip() for x in lines[start + 1:end]], lines[end]


def run_traced(argv: list) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.bpf
@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_a_tracer_demangles_user_stacks_and_usym(tmp_path, cxx_prog, libc):
    """musl's too: its link keeps the user symbols and the demangler only
    where the program prints a user symbol (docs/toolchain.md)."""
    tracer = build(tmp_path, SCRIPT.format(p=cxx_prog), "--libc", libc, suffix=".bt")
    usyms, frames, count = shape(run_traced([tracer, "-c", f"{cxx_prog} 2"]))
    assert usyms == [USYM, USYM] and count == "]: 2"
    assert len(frames) == len(FRAMES) and all(re.fullmatch(w, f) for w, f in zip(FRAMES, frames)), frames


@pytest.mark.bpf
def test_cpp_demangle_false_prints_the_symbol_table(tmp_path, cxx_prog):
    """bpftrace's config variable, and its environment variable at build time."""
    script = "config = { cpp_demangle = false }\n" + SCRIPT.format(p=cxx_prog)
    for tracer in (build(tmp_path, script, suffix=".bt", name="off"),
                   build(tmp_path, SCRIPT.format(p=cxx_prog), suffix=".bt", name="env",
                         env=dict(__import__("os").environ, BPFTRACE_CPP_DEMANGLE="0"))):
        usyms_lines = run_traced([tracer, "-c", f"{cxx_prog} 2"]).splitlines()
        assert "_ZN12_GLOBAL__N_16hiddenEPFiPviEl" in usyms_lines
        assert any(x.strip().startswith("_ZNK4plyc4demo3BoxIiE3runE") for x in usyms_lines)


@pytest.mark.bpf
def test_as_bpftrace_017_and_027_print_them(tmp_path, cxx_prog, bpftrace27):
    """The same script under both bpftraces: the same names (0.27 indents a
    stack key's frames by 8, docs/bpftrace.md)."""
    script = tmp_path / "cxx.bt"
    script.write_text(SCRIPT.format(p=cxx_prog))
    tracer = build(tmp_path, script.read_text(), suffix=".bt")
    ours = shape(run_traced([tracer, "-c", f"{cxx_prog} 2"]))
    assert shape(run_traced(bpftrace27(["-c", f"{cxx_prog} 2", str(script)]))) == ours
    if not shutil.which("bpftrace"):
        pytest.fail("bpftrace 0.17 is not installed (scripts/setup.sh installs it)")
    assert shape(run_traced(["bpftrace", "-c", f"{cxx_prog} 2", str(script)])) == ours
