"""Diagnostics: each kind of mistake, asserted as the full rendered text
(`file:line:col: error: message`, the source line, the caret underline and
the note), in-process through plyc.driver and through the real CLI."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plyc import cli, driver
from plyc.diag import PlycError

ROOT = Path(__file__).resolve().parent.parent
ENV = {"NAME": "bob", "NUM": "42"}


def diagnose(src: str, env=None) -> str:
    """What `plyc check` prints for `src` saved as t.ply (it must fail)."""
    with pytest.raises(PlycError) as info:
        program = driver.parse(src, "t.ply")
        driver.analyze(program, src, "t.ply", driver.Options(env=ENV if env is None else env))
    return info.value.render()


# (id, script, the full diagnostic)
CASES = [
    ('unknown-provider', 'foo:bar { exit(); }', r'''
t.ply:1:1: error: unknown provider 'foo'
foo:bar { exit(); }
^~~~~~~
note: providers are: BEGIN, END, fentry, fexit, h, hardware, i, interval, it, iter, k, kfunc, kprobe, kr, kretfunc, kretprobe, profile, rawtracepoint, s, self, software, t, tracepoint, u, uprobe, ur, uretprobe, usdt, w, watchpoint
'''),
    ('software-unknown-event', 'software:pagefaults { exit(); }', r'''
t.ply:1:1: error: unknown software event 'pagefaults'
software:pagefaults { exit(); }
^~~~~~~~~~~~~~~~~~~
note: software events are: cpu-clock (cpu), task-clock, page-faults (faults), context-switches (cs), cpu-migrations, minor-faults, major-faults, alignment-faults, emulation-faults, dummy, bpf-output
'''),
    ('hardware-unknown-event', 'h:cache-miss:10 { exit(); }', r'''
t.ply:1:1: error: unknown hardware event 'cache-miss'
h:cache-miss:10 { exit(); }
^~~~~~~~~~~~~~~
note: hardware events are: cpu-cycles (cycles), instructions, cache-references, cache-misses, branch-instructions (branches), branch-misses, bus-cycles, frontend-stalls, backend-stalls, ref-cycles
'''),
    ('software-bad-count', 'software:faults:lots { exit(); }', r'''
t.ply:1:1: error: 'lots' is not a count of events
software:faults:lots { exit(); }
^~~~~~~~~~~~~~~~~~~~
note: e.g. software:page-faults:100: the probe runs every COUNT events
'''),
    ('software-zero-count', 'software:cs:0 { exit(); }', r'''
t.ply:1:1: error: a count of 0 events is out of range (1 to 9223372036854775807)
software:cs:0 { exit(); }
^~~~~~~~~~~~~
'''),
    ('software-without-event', 'software { exit(); }', r'''
t.ply:1:1: error: a software probe needs an argument after ':'
software { exit(); }
^~~~~~~~
note: e.g. software:page-faults:100
'''),
    ('provider-without-argument', 'kprobe { exit(); }', r'''
t.ply:1:1: error: a kprobe probe needs an argument after ':'
kprobe { exit(); }
^~~~~~
note: e.g. kprobe:vfs_read
'''),
    ('interval-bad-unit', 'interval:3x { exit(); }', r'''
t.ply:1:1: error: interval '3x' is not a number with an optional unit
interval:3x { exit(); }
^~~~~~~~~~~
note: e.g. interval:1s, interval:500ms; units: ns us ms s m (default s)
'''),
    ('interval-zero', 'interval:0 { exit(); }', r'''
t.ply:1:1: error: an interval must be longer than zero
interval:0 { exit(); }
^~~~~~~~~~
'''),
    ('profile-out-of-range', 'profile:5000hz { exit(); }', r'''
t.ply:1:1: error: profile frequency 5000 is out of range (1 to 1000 hz)
profile:5000hz { exit(); }
^~~~~~~~~~~~~~
'''),
    ('profile-not-hz', 'profile:fast { exit(); }', r'''
t.ply:1:1: error: profile 'fast' is not Nhz or C:Nhz
profile:fast { exit(); }
^~~~~~~~~~~~
note: e.g. profile:99hz, profile:0:100hz
'''),
    ('tracepoint-not-group-event', 'tracepoint:sched { exit(); }', r'''
t.ply:1:1: error: tracepoint 'sched' is not group/event
tracepoint:sched { exit(); }
^~~~~~~~~~~~~~~~
note: e.g. tracepoint:sched/sched_switch
'''),
    ('tracepoint-glob-group', 'tracepoint:sys*/sys_enter { exit(); }', r'''
t.ply:1:1: error: a tracepoint group can't be a glob; only the event can
tracepoint:sys*/sys_enter { exit(); }
^~~~~~~~~~~~~~~~~~~~~~~~~
'''),
    ('begin-with-argument', 'BEGIN:1 { exit(); }', r'''
t.ply:1:1: error: BEGIN takes no argument
BEGIN:1 { exit(); }
^~~~~~~
'''),
    ('kretprobe-offset', 'kretprobe:vfs_read+4 { exit(); }', r'''
t.ply:1:1: error: a kretprobe takes a function name or glob, not an offset or address
kretprobe:vfs_read+4 { exit(); }
^~~~~~~~~~~~~~~~~~~~
'''),
    ('uprobe-without-path', 'u:malloc { exit(); }', r'''
t.ply:1:1: error: 'malloc' is not PATH:symbol
u:malloc { exit(); }
^~~~~~~~
note: e.g. uprobe:/bin/bash:readline, uprobe:c:malloc, uprobe:/bin/ls:0x4a20
'''),
    ('blank-inside-spec', 'k:vfs read { exit(); }', r'''
t.ply:1:12: error: unexpected '{': 'read' after the probe was taken as its body
k:vfs read { exit(); }
           ^
note: a probe's argument ends at the first blank; remove the blank if 'read' belongs to it
'''),
    ('specs-without-comma', 'k:vfs_read k:vfs_write { exit(); }', r'''
t.ply:1:12: error: missing ',' between two probes that share a body
k:vfs_read k:vfs_write { exit(); }
           ^
note: write probes that share a body as SPEC, SPEC { ... }
'''),
    ('missing-semicolon', 'BEGIN {\n\tprintf("hi\\n")\n}', r'''
t.ply:2:16: error: missing ';' before '}'
        printf("hi\n")
                      ^
'''),
    ('missing-semicolon-before-else', 'BEGIN { if (pid) exit(1) else exit(2); }', r'''
t.ply:1:25: error: missing ';' before 'else'
BEGIN { if (pid) exit(1) else exit(2); }
                        ^
'''),
    ('unclosed-brace-at-eof', 'BEGIN {\n\tprintf("hi\\n");\n', r'''
t.ply:2:17: error: unexpected end of input, expected '}'
        printf("hi\n");
                       ^
note: the '{' at line 1, column 7 is not closed
'''),
    ('unclosed-brace-before-next-probe', 'BEGIN {\n\texit();\n\nEND { exit(); }', r'''
t.ply:4:1: error: expected '}' before the next probe
END { exit(); }
^~~
note: the '{' at line 1, column 7 is not closed
'''),
    ('unmatched-brace', 'BEGIN { exit(); } }', r'''
t.ply:1:19: error: unmatched '}'
BEGIN { exit(); } }
                  ^
'''),
    ('no-body', 'BEGIN', r'''
t.ply:1:6: error: unexpected end of input, expected the probe's body
BEGIN
     ^
note: a probe is provider:argument then '{ statements }' or one statement
'''),
    ('bad-body', 'BEGIN }', r'''
t.ply:1:7: error: expected the probe's body, got '}'
BEGIN }
      ^
note: a probe is provider:argument then '{ statements }' or one statement
'''),
    ('empty-script', '', r'''
t.ply: error: the script has no probes
note: a probe is provider:argument { statements }, e.g. BEGIN { printf("hello\n"); }
'''),
    ('only-comments', '#!/usr/bin/env plyc\n# nothing yet\n', r'''
t.ply: error: the script has no probes
note: a probe is provider:argument { statements }, e.g. BEGIN { printf("hello\n"); }
'''),
    ('text-where-probe-belongs', 'BEGIN { exit(); }\nhello', r'''
t.ply:2:1: error: expected a probe like 'provider:argument', BEGIN or END, got 'hello'
hello
^~~~~
note: a probe is written provider:argument, e.g. tracepoint:sched/sched_switch
'''),
    ('unclosed-predicate', 'kprobe:vfs_read / arg0 > 1 { exit(); }', r'''
t.ply:1:28: error: the predicate has no closing '/' before '{'
kprobe:vfs_read / arg0 > 1 { exit(); }
                           ^
note: a predicate is written / expression / right before the probe's '{'
'''),
    ('predicate-without-braces', 'kprobe:vfs_read / arg0 / exit();', r'''
t.ply:1:32: error: unexpected ';' in a predicate
kprobe:vfs_read / arg0 / exit();
                               ^
note: a predicate is written / expression / right before the probe's '{'
'''),
    ('unterminated-string', 'BEGIN { printf("unterminated); }', r'''
t.ply:1:16: error: unterminated string
BEGIN { printf("unterminated); }
               ^
note: a string ends with '"' on the line where it starts
'''),
    ('unterminated-comment', 'BEGIN { /* never closed\n\texit(); }', r'''
t.ply:1:9: error: unterminated comment
BEGIN { /* never closed
        ^~
note: a comment that starts with '/*' ends with '*/'
'''),
    ('bad-escape', 'BEGIN { printf("\\q"); }', r'''
t.ply:1:17: error: unknown escape sequence '\q' in string
BEGIN { printf("\q"); }
                ^~
note: escapes are \n \t \r \0 \a \b \f \v \\ \" \' \xNN
'''),
    ('bad-hex-escape', 'BEGIN { printf("\\xg"); }', r'''
t.ply:1:17: error: \x used with no following hex digits
BEGIN { printf("\xg"); }
                ^~
note: write a byte as \xNN, e.g. \x1b
'''),
    ('unexpected-character', 'BEGIN { exit(1 ` 2); }', r'''
t.ply:1:16: error: unexpected character '`'
BEGIN { exit(1 ` 2); }
               ^
'''),
    ('single-quotes', "BEGIN { printf('x'); }", r'''
t.ply:1:16: error: unexpected character "'"
BEGIN { printf('x'); }
               ^
note: strings are written in double quotes: "text"
'''),
    ('lone-dollar', 'BEGIN { $ = 1; }', r'''
t.ply:1:9: error: '$' must be followed by a name or a number
BEGIN { $ = 1; }
        ^
note: e.g. $x (scratch variable or environment), $target, $1
'''),
    ('bad-octal', 'BEGIN { exit(09); }', r'''
t.ply:1:14: error: invalid digit '9' in octal constant '09'
BEGIN { exit(09); }
             ^~
note: a number that starts with 0 is octal; drop the leading 0 for decimal
'''),
    ('number-suffix', 'BEGIN { exit(10ms); }', r'''
t.ply:1:14: error: invalid suffix 'ms' on integer constant '10ms'
BEGIN { exit(10ms); }
             ^~~~
note: integers have no suffixes; units go in probe arguments (interval:500ms)
'''),
    ('number-too-big', 'BEGIN { exit(99999999999999999999); }', r'''
t.ply:1:14: error: integer constant is larger than 64 bits
BEGIN { exit(99999999999999999999); }
             ^~~~~~~~~~~~~~~~~~~~
'''),
    ('unexpected-token', 'BEGIN { exit(1 2); }', r'''
t.ply:1:16: error: unexpected '2', expected ')' or ',' or an operator
BEGIN { exit(1 2); }
               ^
'''),
    ('unbalanced-parens', 'BEGIN { exit((1); }', r'''
t.ply:1:17: error: unexpected ';', expected ')' or ','
BEGIN { exit((1); }
                ^
'''),
    ('unexpected-eof-in-call', 'BEGIN { exit(', r'''
t.ply:1:14: error: unexpected end of input, expected ')' or an expression
BEGIN { exit(
             ^
'''),
    ('unknown-variable', 'BEGIN { printf("%d\\n", nosuch); }', r'''
t.ply:1:24: error: unknown variable 'nosuch'
BEGIN { printf("%d\n", nosuch); }
                       ^~~~~~
note: variables here: comm, cpu, execname, gid, kpid, pid, stack, time, uid, walltime
'''),
    ('variable-of-another-provider', 'BEGIN { printf("%d\\n", retval); }', r'''
t.ply:1:24: error: unknown variable 'retval'
BEGIN { printf("%d\n", retval); }
                       ^~~~~~
note: 'retval' is a variable of kretprobe, uretprobe probes
'''),
    ('unknown-function', 'BEGIN { nosuch(1); }', r'''
t.ply:1:9: error: unknown function 'nosuch'
BEGIN { nosuch(1); }
        ^~~~~~
note: functions are: clear, dyn, exit, ksym, mem, print, printf, str, strcmp, uptr
'''),
    ('variable-called', 'BEGIN { comm(); }', r'''
t.ply:1:9: error: 'comm' is a variable, not a function
BEGIN { comm(); }
        ^~~~
'''),
    ('too-few-arguments', 'BEGIN { strcmp("a"); }', r'''
t.ply:1:9: error: strcmp() takes 2 arguments, got 1
BEGIN { strcmp("a"); }
        ^~~~~~~~~~~
'''),
    ('too-many-arguments', 'BEGIN { exit(1, 2); }', r'''
t.ply:1:9: error: exit() takes 0 or 1 arguments, got 2
BEGIN { exit(1, 2); }
        ^~~~~~~~~~
'''),
    ('print-no-arguments', 'BEGIN { print(); }', r'''
t.ply:1:9: error: print() takes at least 1 argument, got 0
BEGIN { print(); }
        ^~~~~~~
'''),
    ('aggregation-arity', 'BEGIN { @ = lquantize(1, 2); }', r'''
t.ply:1:13: error: lquantize() takes 4 arguments, got 2
BEGIN { @ = lquantize(1, 2); }
            ^~~~~~~~~~~~~~~
'''),
    ('lquantize-bound-past-s64', 'BEGIN { @a = lquantize(1, 0, 18446744073709551615, 1000000000000000000); }', r'''
t.ply:1:30: error: lquantize()'s max must be between -9223372036854775808 and 9223372036854775807
BEGIN { @a = lquantize(1, 0, 18446744073709551615, 1000000000000000000); }
                             ^~~~~~~~~~~~~~~~~~~~
'''),
    ('printf-precision-past-int-max', 'BEGIN { printf("%.2147483648d|\\n", 1); }', r'''
t.ply:1:16: error: the precision of '%.2147483648d' is more than 2147483647 (C's INT_MAX), the most the C library can write
BEGIN { printf("%.2147483648d|\n", 1); }
               ^~~~~~~~~~~~~~~~~~
'''),
    ('printf-width-past-int-max', 'BEGIN { printf("%-99999999999s|\\n", "a"); }', r'''
t.ply:1:16: error: the width of '%-99999999999s' is more than 2147483647 (C's INT_MAX), the most the C library can write
BEGIN { printf("%-99999999999s|\n", "a"); }
               ^~~~~~~~~~~~~~~~~~~
'''),
    ('strcmp-of-int', 'BEGIN { printf("%d\\n", strcmp(1, "a")); }', r'''
t.ply:1:31: error: strcmp() compares strings, got s64
BEGIN { printf("%d\n", strcmp(1, "a")); }
                              ^
note: read a string from a pointer with str(p)
'''),
    ('quantize-of-string', 'BEGIN { @x = quantize("str"); }', r'''
t.ply:1:23: error: quantize() needs an integer, got char[8]
BEGIN { @x = quantize("str"); }
                      ^~~~~
'''),
    ('aggregation-read', 'BEGIN { @ = count(); printf("%d\\n", @); }', r'''
t.ply:1:37: error: @ is an aggregation and can't be read in a probe
BEGIN { @ = count(); printf("%d\n", @); }
                                    ^
note: keep values you need to read in a plain map (no '@')
'''),
    ('aggregation-not-assigned', 'BEGIN { count(); }', r'''
t.ply:1:9: error: count() must be assigned to an @map, e.g. @[comm] = count();
BEGIN { count(); }
        ^~~~~~~
'''),
    ('aggregation-in-plain-map', 'BEGIN { m[1] = sum(1); }', r'''
t.ply:1:16: error: sum() must be assigned to an @map, e.g. @[comm] = sum(x);
BEGIN { m[1] = sum(1); }
               ^~~~~~
'''),
    ('not-an-aggregation', 'BEGIN { @x = 1; }', r'''
t.ply:1:14: error: @maps hold aggregations: assign count()/sum()/min()/max()/avg()/quantize()/lquantize(), or drop the '@' for a plain map
BEGIN { @x = 1; }
             ^
'''),
    # bpftrace's hist() and stats() are its front end's, not ply's, in any spelling
    ('bpftrace-hist-in-ply', 'BEGIN { @h = hist(1); }', r'''
t.ply:1:14: error: @maps hold aggregations: assign count()/sum()/min()/max()/avg()/quantize()/lquantize(), or drop the '@' for a plain map
BEGIN { @h = hist(1); }
             ^~~~~~~
'''),
    ('internal-hist-in-ply', 'BEGIN { @h = _hist(1); }', r'''
t.ply:1:14: error: @maps hold aggregations: assign count()/sum()/min()/max()/avg()/quantize()/lquantize(), or drop the '@' for a plain map
BEGIN { @h = _hist(1); }
             ^~~~~~~~
'''),
    ('bpftrace-stats-in-ply', 'BEGIN { @s = stats(1); }', r'''
t.ply:1:14: error: @maps hold aggregations: assign count()/sum()/min()/max()/avg()/quantize()/lquantize(), or drop the '@' for a plain map
BEGIN { @s = stats(1); }
             ^~~~~~~~
'''),
    ('bpftrace-hist-as-statement', 'BEGIN { hist(1); }', r'''
t.ply:1:9: error: unknown function 'hist'
BEGIN { hist(1); }
        ^~~~
note: functions are: clear, dyn, exit, ksym, mem, print, printf, str, strcmp, uptr
'''),
    ('mixed-aggregations', 'BEGIN { @x = count(); }\nEND { @x = sum(1); }', r'''
t.ply:2:12: error: @x is a count() aggregation elsewhere, not sum()
END { @x = sum(1); }
           ^~~~~~
'''),
    ('key-count-mismatch', 'BEGIN { @x[1] = count(); @x[1, 2] = count(); }', r'''
t.ply:1:26: error: @x has 1 key elsewhere, 2 here
BEGIN { @x[1] = count(); @x[1, 2] = count(); }
                         ^~~~~~~~
'''),
    ('key-type-mismatch', 'BEGIN { @x[1] = count(); @x["a"] = count(); }', r'''
t.ply:1:29: error: @x key is s64 elsewhere, char[8] here
BEGIN { @x[1] = count(); @x["a"] = count(); }
                            ^~~
'''),
    ('plain-map-never-written', 'BEGIN { printf("%d\\n", m[1]); }', r'''
t.ply:1:24: error: map 'm' is read but never assigned
BEGIN { printf("%d\n", m[1]); }
                       ^~~~
'''),
    ('plain-map-value-type', 'BEGIN { m[1] = 1; m[2] = "s"; }', r'''
t.ply:1:26: error: map 'm' holds s64, not char[8]
BEGIN { m[1] = 1; m[2] = "s"; }
                         ^~~
'''),
    ('scratch-read-before-assigned', 'BEGIN { printf("%d\\n", $x); $x = 1; }', r'''
t.ply:1:24: error: $x is read before it is assigned
BEGIN { printf("%d\n", $x); $x = 1; }
                       ^~
'''),
    ('scratch-changes-type', 'BEGIN { $x = 1; $x = "s"; }', r'''
t.ply:1:22: error: $x was s64 and can't now hold char[8]
BEGIN { $x = 1; $x = "s"; }
                     ^~~
'''),
    ('env-unset', 'BEGIN { printf("%d\\n", $PLYC_TEST_UNSET); }', r'''
t.ply:1:24: error: $PLYC_TEST_UNSET is not set: no environment variable PLYC_TEST_UNSET and no assignment to $PLYC_TEST_UNSET
BEGIN { printf("%d\n", $PLYC_TEST_UNSET); }
                       ^~~~~~~~~~~~~~~~
'''),
    ('env-string-printed-as-int', 'BEGIN { printf("%d\\n", $NAME); }', r'''
t.ply:1:24: error: '%d' can't print a value of type char[8]
BEGIN { printf("%d\n", $NAME); }
                       ^~~~~
note: use %v for any value's default format
'''),
    ('dollar-zero', 'BEGIN { printf("%d\\n", $0); }', r'''
t.ply:1:24: error: $0 is not an argument; arguments start at $1
BEGIN { printf("%d\n", $0); }
                       ^~
'''),
    ('printf-format-not-literal', 'BEGIN { $f = "%d\\n"; printf($f, 1); }', r'''
t.ply:1:29: error: printf()'s first argument must be a format string literal
BEGIN { $f = "%d\n"; printf($f, 1); }
                            ^~
'''),
    ('printf-argument-count', 'BEGIN { printf("%d %d\\n", 1); }', r'''
t.ply:1:9: error: the format has 2 conversions but 1 argument follows
BEGIN { printf("%d %d\n", 1); }
        ^~~~~~~~~~~~~~~~~~~~
'''),
    ('printf-too-many-arguments', 'BEGIN { printf("hi\\n", 1, 2); }', r'''
t.ply:1:9: error: the format has 0 conversions but 2 arguments follow
BEGIN { printf("hi\n", 1, 2); }
        ^~~~~~~~~~~~~~~~~~~~
'''),
    ('printf-type-mismatch', 'BEGIN { printf("%d\\n", comm); }', r'''
t.ply:1:24: error: '%d' can't print a value of type char[16]
BEGIN { printf("%d\n", comm); }
                       ^~~~
note: use %v for any value's default format
'''),
    ('printf-string-of-int', 'BEGIN { printf("%s\\n", pid); }', r'''
t.ply:1:24: error: '%s' can't print a value of type u32
BEGIN { printf("%s\n", pid); }
                       ^~~
note: use %v for any value's default format
'''),
    ('printf-invalid-conversion', 'BEGIN { printf("%q\\n", 1); }', r'''
t.ply:1:16: error: invalid conversion '%q' in format string
BEGIN { printf("%q\n", 1); }
               ^~~~~~
'''),
    ('printf-lone-percent', 'BEGIN { printf("100%"); }', r'''
t.ply:1:16: error: the format ends with a lone '%'; write %% for a percent sign
BEGIN { printf("100%"); }
               ^~~~~~
'''),
    ('printf-percent-newline', 'BEGIN { printf("50%\\n"); }', r'''
t.ply:1:16: error: invalid conversion '%\n' in format string; write %% for a percent sign
BEGIN { printf("50%\n"); }
               ^~~~~~~
'''),
    ('printf-star-width', 'BEGIN { printf("%*d\\n", 1); }', r'''
t.ply:1:16: error: '*' widths are not supported in formats
BEGIN { printf("%*d\n", 1); }
               ^~~~~~~
'''),
    ('exit-of-string', 'BEGIN { exit("x"); }', r'''
t.ply:1:14: error: exit() takes an integer status, got char[8]
BEGIN { exit("x"); }
             ^~~
'''),
    ('clear-of-int', 'BEGIN { clear(3); }', r'''
t.ply:1:15: error: clear() takes a map, e.g. clear(@name)
BEGIN { clear(3); }
              ^
'''),
    ('clear-unknown-map', 'BEGIN { clear(@nosuch); }', r'''
t.ply:1:15: error: no map named @nosuch
BEGIN { clear(@nosuch); }
              ^~~~~~~
'''),
    ('print-unknown-map', 'BEGIN { print(@nosuch); }', r'''
t.ply:1:15: error: no map named @nosuch
BEGIN { print(@nosuch); }
              ^~~~~~~
'''),
    ('print-map-with-others', 'BEGIN { @ = count(); print(@, 1); }', r'''
t.ply:1:28: error: print() of a map takes that map alone: print(@name)
BEGIN { @ = count(); print(@, 1); }
                           ^
'''),
    ('void-used-as-value', 'BEGIN { print(printf("x")); }', r'''
t.ply:1:15: error: printf() has no value
BEGIN { print(printf("x")); }
              ^~~~~~~~~~~
'''),
    ('tracepoint-unknown-field', 't:syscalls/sys_enter_openat { printf("%d\\n", data->nosuch); }', r'''
t.ply:1:46: error: tracepoint syscalls:sys_enter_openat has no field 'nosuch'
t:syscalls/sys_enter_openat { printf("%d\n", data->nosuch); }
                                             ^~~~~~~~~~~~
note: its fields are: __syscall_nr, dfd, filename, flags, mode
'''),
    ('tracepoint-field-in-glob', 't:syscalls/sys_enter_* { printf("%d\\n", data->dfd); }', r'''
t.ply:1:41: error: tracepoint syscalls:sys_enter_accept, which syscalls:sys_enter_* matches, has no field 'dfd'
t:syscalls/sys_enter_* { printf("%d\n", data->dfd); }
                                        ^~~~~~~~~
'''),
    ('tracepoint-field-dot', 't:sched/sched_switch { printf("%d\\n", data.prev_pid); }', r'''
t.ply:1:39: error: use 'data->field' for tracepoint fields
t:sched/sched_switch { printf("%d\n", data.prev_pid); }
                                      ^~~~~~~~~~~~~
'''),
    ('tracepoint-missing', 't:nosuch/event { printf("%d\\n", data->x); }', r'''
t.ply:1:1: error: no tracepoint nosuch:event on the build machine
t:nosuch/event { printf("%d\n", data->x); }
^~~~~~~~~~~~~~
'''),
    ('tracepoint-not-an-event', 't:sched/enable { exit(data->x); }', r'''
t.ply:1:1: error: no tracepoint sched:enable on the build machine
t:sched/enable { exit(data->x); }
^~~~~~~~~~~~~~
'''),
    ('tracepoint-bad-name', 't:sched/sched_switch/.. { exit(); }', r'''
t.ply:1:1: error: tracepoint 'sched/sched_switch/..' is not group/event
t:sched/sched_switch/.. { exit(); }
^~~~~~~~~~~~~~~~~~~~~~~
note: e.g. tracepoint:sched/sched_switch
'''),
    ('index-not-constant', 't:sched/sched_switch { printf("%c\\n", data->prev_comm[$1]); }', r'''
t.ply:1:55: error: an index must be a constant integer
t:sched/sched_switch { printf("%c\n", data->prev_comm[$1]); }
                                                      ^~
note: only numbers, and + - * of numbers, are known at compile time
'''),
    ('index-out-of-bounds', 't:sched/sched_switch { printf("%c\\n", data->prev_comm[16]); }', r'''
t.ply:1:55: error: index 16 is out of bounds for char[16]
t:sched/sched_switch { printf("%c\n", data->prev_comm[16]); }
                                                      ^~
'''),
    ('stack-in-begin', 'BEGIN { @[stack] = count(); }', r'''
t.ply:1:11: error: BEGIN probes have no kernel stack
BEGIN { @[stack] = count(); }
          ^~~~~
'''),
    ('stack-in-interval', 'interval:1s { print(stack); }', r'''
t.ply:1:21: error: interval probes have no kernel stack
interval:1s { print(stack); }
                    ^~~~~
'''),
    ('lquantize-not-constant', 'BEGIN { @ = lquantize(1, pid, 10, 1); }', r'''
t.ply:1:26: error: lquantize()'s min, max and step must be constant integers
BEGIN { @ = lquantize(1, pid, 10, 1); }
                         ^~~
note: only numbers, and + - * of numbers, are known at compile time
'''),
    ('lquantize-bad-bounds', 'BEGIN { @ = lquantize(1, 10, 0, 1); }', r'''
t.ply:1:13: error: lquantize(x, min, max, step) needs min < max and step > 0
BEGIN { @ = lquantize(1, 10, 0, 1); }
            ^~~~~~~~~~~~~~~~~~~~~~
'''),
    ('str-size-range', 'BEGIN { print(str(1, 5000)); }', r'''
t.ply:1:22: error: a size must be between 1 and 4096
BEGIN { print(str(1, 5000)); }
                     ^~~~
'''),
    ('assign-to-literal', 'BEGIN { 1 = 2; }', r'''
t.ply:1:11: error: cannot assign to this expression: only @maps, maps and $variables can be assigned
BEGIN { 1 = 2; }
          ^
'''),
    ('assign-to-name', 'BEGIN { x = 2; }', r'''
t.ply:1:9: error: can't assign to 'x': it is not a map or a $variable
BEGIN { x = 2; }
        ^
note: write x[key] = ... for a plain map, @x = ... for an aggregation, $x = ... for a scratch variable
'''),
    ('compound-assign-to-name', 'BEGIN { if (pid) total += 1; }', r'''
t.ply:1:18: error: can't assign to 'total': it is not a map or a $variable
BEGIN { if (pid) total += 1; }
                 ^~~~~
note: write total[key] += ... for a plain map, @total = ... for an aggregation, $total += ... for a scratch variable
'''),
    ('assign-to-expression', 'BEGIN { $a + $b = 2; }', r'''
t.ply:1:17: error: cannot assign to this expression: only @maps, maps and $variables can be assigned
BEGIN { $a + $b = 2; }
                ^
'''),
    ('no-effect-variable', 'BEGIN { pid; }', r'''
t.ply:1:9: error: this expression does nothing; did you mean to assign it or print it?
BEGIN { pid; }
        ^~~
'''),
    ('no-effect-expression', 'BEGIN { 1 + 2; }', r'''
t.ply:1:9: error: this expression does nothing; did you mean to assign it or print it?
BEGIN { 1 + 2; }
        ^~~~~
'''),
    ('string-condition', 'BEGIN { if ("a") exit(); }', r'''
t.ply:1:13: error: a condition must be an integer, got char[8]
BEGIN { if ("a") exit(); }
            ^~~
note: compare strings with strcmp(a, b) == 0 or a == b
'''),
    ('string-arithmetic', 'BEGIN { exit(comm + 1); }', r'''
t.ply:1:14: error: operator '+' needs integers, got char[16]
BEGIN { exit(comm + 1); }
             ^~~~
'''),
    ('dereference', 'BEGIN { exit(*pid); }', r'''
t.ply:1:14: error: pointer dereference with '*' is not supported; use str(), mem() or a cast with '->'
BEGIN { exit(*pid); }
             ^~~~
'''),
    ('ternary-branch-types', 'BEGIN { printf("%d\\n", pid ? 2 : "s"); }', r'''
t.ply:1:24: error: the branches of '?:' have different types: s64 and char[8]
BEGIN { printf("%d\n", pid ? 2 : "s"); }
                       ^~~~~~~~~~~~~
'''),
]


@pytest.mark.parametrize("src,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_diagnostic(src, expected):
    assert diagnose(src) == expected.strip("\n")


def test_the_cases_are_distinct():
    assert len(CASES) >= 30
    assert len({c[0] for c in CASES}) == len(CASES)
    messages = {c[2].strip("\n").splitlines()[0].split(": error: ")[1] for c in CASES}
    assert len(messages) >= 30


def test_too_deep_nesting_is_an_error_not_a_crash():
    src = "BEGIN { exit(" + "-" * 120 + "1); }"
    assert diagnose(src) == (
        "t.ply:1:110: error: the script nests more than 100 levels deep here\n"
        + src + "\n" + " " * 109 + "^" + "~" * 24 + "\n"
        "note: split the expression with $variables")
    deep_ifs = "BEGIN " + "if (1) " * 150 + "exit();"
    assert "nests more than 100 levels deep" in diagnose(deep_ifs)
    long_sum = "BEGIN { exit(" + " + ".join(["1"] * 2000) + "); }"
    assert "nests more than 100 levels deep" in diagnose(long_sum)


def test_nesting_up_to_the_limit_is_fine():
    src = "BEGIN { exit(" + "-" * 90 + "1); }"
    program = driver.parse(src, "t.ply")
    driver.analyze(program, src, "t.ply", driver.Options(env={}))


def test_all_errors_of_a_pass_are_reported_together():
    src = 'BEGIN {\n\tprintf("%d\\n", a);\n\tprintf("%d\\n", b);\n}\nEND { exit(c); }'
    note = "note: variables here: comm, cpu, execname, gid, kpid, pid, stack, time, uid, walltime"
    assert diagnose(src) == "\n".join([
        "t.ply:2:17: error: unknown variable 'a'",
        '        printf("%d\\n", a);',
        "                       ^",
        note,
        "t.ply:3:17: error: unknown variable 'b'",
        '        printf("%d\\n", b);',
        "                       ^",
        note,
        "t.ply:5:12: error: unknown variable 'c'",
        "END { exit(c); }",
        "           ^",
        note,
    ])


def test_only_the_first_20_errors_are_shown():
    src = "BEGIN {\n" + "\texit(nosuch);\n" * 25 + "}"
    text = diagnose(src)
    assert text.count(": error: unknown variable 'nosuch'") == 20
    assert text.startswith("t.ply:2:7: error: unknown variable 'nosuch'\n")
    assert "t.ply:21:7: error" in text and "t.ply:22:7: error" not in text
    assert text.endswith("\nt.ply: 5 more errors not shown")


def test_a_mistake_seen_by_both_checker_passes_is_reported_once():
    src = 'BEGIN { printf("%d\\n", m[1]); }'
    assert diagnose(src).count("error:") == 1


def test_caret_lines_up_under_tabs():
    src = "BEGIN {\n\t\tx = 1;\n}"
    assert diagnose(src) == (
        "t.ply:2:3: error: can't assign to 'x': it is not a map or a $variable\n"
        "                x = 1;\n"
        "                ^\n"
        "note: write x[key] = ... for a plain map, @x = ... for an aggregation, "
        "$x = ... for a scratch variable")


def test_diagnostic_on_a_later_line_of_a_file():
    src = "#!/usr/bin/env plyc\n\ntracepoint:sched/sched_switch\n{\n\t@[comm] = count()\n}\n"
    assert diagnose(src) == (
        "t.ply:5:19: error: missing ';' before '}'\n"
        "        @[comm] = count()\n"
        "                         ^")


def test_lines_are_counted_at_newlines_only():
    # A form feed or U+2028 is not a line break for the lexer, nor for the
    # source line shown under the message.
    assert diagnose("BEGIN\x0c{ exit(); }\n\x0cEND { exit(nosuch); }") == (
        "t.ply:2:13: error: unknown variable 'nosuch'\n"
        " END { exit(nosuch); }\n"
        "            ^~~~~~\n"
        "note: variables here: comm, cpu, execname, gid, kpid, pid, stack, time, uid, walltime")
    assert diagnose("BEGIN {\r\n\texit(1)\r\n}\r\n") == (
        "t.ply:2:9: error: missing ';' before '}'\n"
        "        exit(1)\n"
        "               ^")


def test_unprintable_character():
    assert diagnose("BEGIN { exit(\x01); }") == (
        "t.ply:1:14: error: unexpected character U+0001\n"
        "BEGIN { exit( ); }\n"
        "             ^")


def test_environment_values_are_typed_at_compile_time():
    src = 'BEGIN { printf("%d\\n", $NUM); }'
    program = driver.parse(src, "t.ply")
    driver.analyze(program, src, "t.ply", driver.Options(env={"NUM": "42"}))
    assert diagnose(src, env={"NUM": "forty-two"}) == (
        "t.ply:1:24: error: '%d' can't print a value of type char[16]\n"
        'BEGIN { printf("%d\\n", $NUM); }\n'
        "                       ^~~~\n"
        "note: use %v for any value's default format")


# --- through the command line ----------------------------------------------

def plyc(*args, cwd=ROOT):
    """`python3 -m plyc ARGS` as a user runs it (PLYC_TEST_UNSET is unset)."""
    env = {k: v for k, v in os.environ.items() if k != "PLYC_TEST_UNSET"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "plyc", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=60, env=env)


@pytest.mark.parametrize("cid", ["missing-semicolon", "unknown-variable", "tracepoint-unknown-field",
                                 "printf-type-mismatch", "env-unset", "empty-script"])
def test_cli_check_prints_the_diagnostic_and_exits_1(cid, tmp_path):
    src, expected = next(c[1:] for c in CASES if c[0] == cid)
    script = tmp_path / "t.ply"
    script.write_text(src)
    proc = plyc("check", "t.ply", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == expected.strip("\n") + "\n"
    assert "Traceback" not in proc.stderr


def test_cli_check_of_a_one_liner():
    proc = plyc("check", "-e", "BEGIN { exit(1 2); }")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == ("<command-line>:1:16: error: unexpected '2', expected ')' or ',' or an operator\n"
                           "BEGIN { exit(1 2); }\n"
                           "               ^\n")


def test_cli_check_of_a_good_script_is_silent():
    proc = plyc("check", "-e", 'BEGIN { printf("%d\\n", 1 << 2 | 1); exit(); }')
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_cli_check_of_a_missing_file(tmp_path):
    proc = plyc("check", tmp_path / "nope.ply")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == f"plyc: error: cannot read {tmp_path / 'nope.ply'}: No such file or directory\n"


def test_cli_check_of_a_binary_file(tmp_path):
    script = tmp_path / "bin.ply"
    script.write_bytes(b"\xff\xfe\x00BEGIN")
    proc = plyc("check", script)
    assert proc.returncode == 1
    assert proc.stderr == f"plyc: error: {script} is not UTF-8 text\n"


@pytest.mark.parametrize("cid", ["unclosed-brace-at-eof", "bad-escape", "key-type-mismatch", "stack-in-begin"])
def test_cli_main_in_process(cid, tmp_path, capsys):
    src, expected = next(c[1:] for c in CASES if c[0] == cid)
    (tmp_path / "t.ply").write_text(src)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert cli.main(["check", "t.ply"]) == 1
    finally:
        os.chdir(cwd)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == expected.strip("\n") + "\n"


def test_cli_emit_ast_reports_syntax_errors_too(capsys):
    assert cli.main(["emit", "--stage", "ast", "-e", "BEGIN { /* oops"]) == 1
    assert capsys.readouterr().err == ("<command-line>:1:9: error: unterminated comment\n"
                                       "BEGIN { /* oops\n"
                                       "        ^~\n"
                                       "note: a comment that starts with '/*' ends with '*/'\n")


def test_a_cache_folder_that_cannot_be_made(tmp_path):
    # a user whose $HOME is not there: one line for a build; a check needs no cache
    env = dict(os.environ, PLYC_CACHE="/etc/hostname/plyc", PYTHONPATH=str(ROOT))
    (tmp_path / "t.ply").write_text("BEGIN { exit(0); }\n")
    proc = subprocess.run([sys.executable, "-m", "plyc", "build", "t.ply", "-o", "t"], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=120)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == ("plyc: error: cannot make plyc's cache folder /etc/hostname/plyc: Not a directory "
                           "(set $PLYC_CACHE or $XDG_CACHE_HOME to a folder you can write)\n")
    proc = subprocess.run([sys.executable, "-m", "plyc", "check", "t.ply"], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
