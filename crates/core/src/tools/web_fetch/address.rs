//! Which addresses `web_fetch` refuses unless configured: this machine, private and
//! link-local networks (the cloud metadata service at 169.254.169.254 among them), shared
//! carrier NAT, multicast and the ranges that name no host on the internet. An IPv6
//! address that carries an IPv4 one (mapped, compatible, NAT64, 6to4) is judged by the
//! IPv4 address it reaches.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reserved {
    /// 127.0.0.0/8, ::1: this machine.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16, fc00::/7 (and the old site-local fec0::/10).
    Private,
    /// 169.254/16, fe80::/10: the cloud metadata service lives there.
    LinkLocal,
    /// 100.64/10: a carrier's shared address space, private to its network.
    SharedNat,
    /// 0.0.0.0/8, ::: "this host", which a connect reaches as the machine itself.
    Unspecified,
    /// 224/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// Documentation, benchmarking, protocol and future-use ranges, tunnels (Teredo): no
    /// public host is there.
    Special,
}

impl std::fmt::Display for Reserved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Reserved::Loopback => "a loopback address (this machine)",
            Reserved::Private => "a private network's address",
            Reserved::LinkLocal => "a link-local address (where cloud metadata services answer)",
            Reserved::SharedNat => "a carrier's shared NAT address",
            Reserved::Unspecified => "the unspecified address (this machine)",
            Reserved::Multicast => "a multicast address",
            Reserved::Broadcast => "the broadcast address",
            Reserved::Special => "an address reserved for special use",
        })
    }
}

/// What keeps `address` from being fetched by default; `None`: a public address.
pub fn reserved(address: IpAddr) -> Option<Reserved> {
    match address {
        IpAddr::V4(v4) => reserved_v4(v4),
        IpAddr::V6(v6) => reserved_v6(v6),
    }
}

fn reserved_v4(address: Ipv4Addr) -> Option<Reserved> {
    let [a, b, c, _] = address.octets();
    Some(match (a, b, c) {
        (127, ..) => Reserved::Loopback,
        (10, ..) | (172, 16..=31, _) | (192, 168, _) => Reserved::Private,
        (169, 254, _) => Reserved::LinkLocal,
        (100, 64..=127, _) => Reserved::SharedNat,
        (0, ..) => Reserved::Unspecified,
        (224..=239, ..) => Reserved::Multicast,
        (255, 255, 255) if address == Ipv4Addr::BROADCAST => Reserved::Broadcast,
        // Protocol assignments, the three documentation nets, benchmarking, 6to4 relay
        // anycast, and the future-use block.
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) | (198, 18..=19, _) | (192, 88, 99) => {
            Reserved::Special
        }
        (240..=255, ..) => Reserved::Special,
        _ => return None,
    })
}

fn reserved_v6(address: Ipv6Addr) -> Option<Reserved> {
    if address.is_loopback() {
        return Some(Reserved::Loopback);
    }
    if address.is_unspecified() {
        return Some(Reserved::Unspecified);
    }
    if let Some(v4) = embedded_v4(address) {
        return reserved_v4(v4);
    }
    let segments = address.segments();
    let first = segments[0];
    Some(match first {
        _ if first & 0xfe00 == 0xfc00 => Reserved::Private,
        _ if first & 0xffc0 == 0xfec0 => Reserved::Private,
        _ if first & 0xffc0 == 0xfe80 => Reserved::LinkLocal,
        _ if first & 0xff00 == 0xff00 => Reserved::Multicast,
        // NAT64's local-use prefix (64:ff9b:1::/48) translates to private networks.
        0x64 if segments[1] == 0xff9b && segments[2] == 1 => Reserved::Private,
        // Documentation (2001:db8::/32), Teredo (2001::/32), the discard prefix (100::/64).
        0x2001 if segments[1] == 0x0db8 || segments[1] == 0 => Reserved::Special,
        0x0100 if segments[1..4] == [0, 0, 0] => Reserved::Special,
        _ => return None,
    })
}

/// The IPv4 address an IPv6 one carries and reaches: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) and 6to4 (`2002:aabb:ccdd::`).
fn embedded_v4(address: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = address.segments();
    let low = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match s {
        [0, 0, 0, 0, 0, 0xffff, high, lo] | [0, 0, 0, 0, 0, 0, high, lo] => Some(low(high, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, high, lo] => Some(low(high, lo)),
        [0x2002, high, lo, ..] => Some(low(high, lo)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Each range is refused for its reason, at its edges, and the public addresses beside
    /// them are not.
    #[test]
    fn addresses_are_classified_by_their_range() {
        use Reserved::*;
        let cases: &[(&str, Option<Reserved>)] = &[
            ("127.0.0.1", Some(Loopback)),
            ("127.255.255.254", Some(Loopback)),
            ("10.0.0.1", Some(Private)),
            ("10.255.255.255", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("172.15.255.255", None),
            ("172.32.0.1", None),
            ("192.168.1.1", Some(Private)),
            ("192.169.0.1", None),
            ("169.254.169.254", Some(LinkLocal)),
            ("169.254.0.1", Some(LinkLocal)),
            ("100.64.0.1", Some(SharedNat)),
            ("100.127.255.255", Some(SharedNat)),
            ("100.63.255.255", None),
            ("100.128.0.1", None),
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Unspecified)),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.250", Some(Multicast)),
            ("255.255.255.255", Some(Broadcast)),
            ("240.0.0.1", Some(Special)),
            ("192.0.2.10", Some(Special)),
            ("198.18.0.1", Some(Special)),
            ("203.0.113.7", Some(Special)),
            ("8.8.8.8", None),
            ("1.1.1.1", None),
            ("93.184.215.14", None),
            ("::1", Some(Loopback)),
            ("::", Some(Unspecified)),
            ("fc00::1", Some(Private)),
            ("fd12:3456::1", Some(Private)),
            ("fec0::1", Some(Private)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("ff02::1", Some(Multicast)),
            ("2001:db8::1", Some(Special)),
            ("2001:0:4136:e378::1", Some(Special)),
            ("100::1", Some(Special)),
            ("64:ff9b:1::1", Some(Private)),
            // IPv6 carrying IPv4: judged by the IPv4 address.
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::ffff:10.1.2.3", Some(Private)),
            ("::ffff:8.8.8.8", None),
            ("::127.0.0.1", Some(Loopback)),
            ("64:ff9b::192.168.0.1", Some(Private)),
            ("64:ff9b::8.8.8.8", None),
            ("2002:7f00:1::", Some(Loopback)),
            ("2002:a9fe:a9fe::1", Some(LinkLocal)),
            ("2002:808:808::1", None),
            ("2606:4700:4700::1111", None),
            ("2a00:1450:4001:80b::200e", None),
        ];
        let got: Vec<(&str, Option<Reserved>)> = cases
            .iter()
            .map(|(text, _)| (*text, reserved(text.parse().unwrap())))
            .collect();
        assert_eq!(got, cases.to_vec());
    }
}
