"""Names bpftrace resolves that are neither variables nor the script's own
#defines: the constants of the system headers a script #includes (only the
socket families and types the network tools use), and the kernel's
enumerators through BTF (`TCP_SYN_SENT`, `SKB_DROP_REASON_NOT_SPECIFIED`),
which bpftrace 0.17 resolves without any #include.

The header values are Linux's ABI (glibc's <bits/socket.h>, the kernel's
<linux/socket.h>), the same on every architecture plyc targets; a name
from a header the script does not include stays unknown, as in bpftrace."""
from __future__ import annotations

import re
from typing import Optional

from ...btf import BTFError

# Address families, numbered as both headers number them; AF_x is PF_x.
_FAMILIES = """UNSPEC UNIX INET AX25 IPX APPLETALK NETROM BRIDGE ATMPVC X25 INET6 ROSE
    DECnet NETBEUI SECURITY KEY NETLINK PACKET ASH ECONET ATMSVC RDS SNA IRDA PPPOX
    WANPIPE LLC IB MPLS CAN TIPC BLUETOOTH IUCV RXRPC ISDN PHONET IEEE802154 CAIF ALG
    NFC VSOCK KCM QIPCRTR SMC XDP MCTP MAX""".split()
_SOCKET = {f"{p}_{name}": i for i, name in enumerate(_FAMILIES) for p in ("AF", "PF")}
_SOCKET.update({f"{p}_{alias}": _SOCKET[f"AF_{name}"] for p in ("AF", "PF")
                for alias, name in (("LOCAL", "UNIX"), ("FILE", "UNIX"), ("ROUTE", "NETLINK"))})
_SOCKET.update(SOCK_STREAM=1, SOCK_DGRAM=2, SOCK_RAW=3, SOCK_RDM=4, SOCK_SEQPACKET=5,
               SOCK_DCCP=6, SOCK_PACKET=10, SOL_SOCKET=1)

HEADERS = {"sys/socket.h": _SOCKET, "linux/socket.h": _SOCKET, "bits/socket.h": _SOCKET}

INCLUDE = re.compile(r"#\s*include\s*[<\"]([^>\"]+)[>\"]")


def included(preamble) -> list:
    """The headers the script's active #include lines name."""
    out = []
    for item in preamble.includes:
        m = INCLUDE.match(item.text.strip())
        if m:
            out.append(m.group(1))
    return out


def header_constant(name: str, preamble) -> Optional[int]:
    for header in included(preamble):
        value = HEADERS.get(header, {}).get(name)
        if value is not None:
            return value
    return None


def enumerator(name: str, ktypes) -> Optional[int]:
    """A kernel enumerator's value (None when the kernel's BTF has none of
    that name, or there is no BTF to read)."""
    try:
        found = ktypes.btf.enumerator(name)
    except (BTFError, OSError):
        return None
    return None if found is None else found[0]


def header_of(name: str) -> Optional[str]:
    """The header that defines `name`, for a note when it is not included."""
    return next((h for h, names in HEADERS.items() if name in names), None)


def lookup(name: str, preamble, ktypes) -> Optional[int]:
    value = header_constant(name, preamble)
    return value if value is not None else enumerator(name, ktypes)
