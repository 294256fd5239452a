#!/usr/bin/env python3
"""Asks the reference library (tokenizers) and this machine's libraries where their Unicode tables
differ, and prints the C++ tables TensorFold keeps so that it tokenizes as the reference does:

1. Regex classes (src/text/regex_reference_classes.cpp): the code points the reference's bundled
   Oniguruma matches with \\p{L}, \\p{M}, \\p{N}, \\p{Nd}, \\p{Alphabetic} and the system's
   libonig does not.
2. NFC ordering (src/text/nfc_reference_classes.cpp): the marks utf8proc gives a combining class
   above 1 that the reference's NFC leaves in place (class 0 in its tables).

Usage: python3 python/tools/probe_reference_unicode.py   (needs pip tokenizers, libonig, libutf8proc)
"""
import ctypes
import ctypes.util

from tokenizers import Regex, normalizers, pre_tokenizers

ALL = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]


def reference_class(prop):
    """Code points the reference's Oniguruma matches with \\p{prop}."""
    text = "".join(chr(cp) for cp in ALL)
    # removing every code point outside the class leaves the class's code points
    split = pre_tokenizers.Split(Regex(r"\P{%s}" % prop), "removed")
    return {ord(ch) for piece, _ in split.pre_tokenize_str(text) for ch in piece}


def system_class(prop):
    """Code points the system's libonig matches with \\p{prop} (UTF-8, default syntax)."""
    onig = ctypes.CDLL(ctypes.util.find_library("onig") or "libonig.so.5")
    utf8 = ctypes.addressof(ctypes.c_char.in_dll(onig, "OnigEncodingUTF8"))
    syntax = ctypes.c_void_p.in_dll(onig, "OnigDefaultSyntax").value
    encs = (ctypes.c_void_p * 1)(utf8)
    onig.onig_initialize(encs, 1)
    pattern = (r"\A\p{%s}\z" % prop).encode()
    reg = ctypes.c_void_p()
    einfo = ctypes.create_string_buffer(64)
    onig.onig_new.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint,
                              ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    pbuf = ctypes.create_string_buffer(pattern)
    end = ctypes.cast(ctypes.addressof(pbuf) + len(pattern), ctypes.c_char_p)
    assert onig.onig_new(ctypes.byref(reg), pbuf, end, 0, utf8, syntax, einfo) == 0
    onig.onig_search.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 4 + [ctypes.c_void_p, ctypes.c_uint]
    onig.onig_search.restype = ctypes.c_int
    got = set()
    for cp in ALL:
        b = chr(cp).encode()
        buf = ctypes.create_string_buffer(b, len(b))
        s = ctypes.addressof(buf)
        if onig.onig_search(reg, s, s + len(b), s, s + len(b), None, 0) >= 0:
            got.add(cp)
    return got


def ranges(cps):
    out = []
    for cp in sorted(cps):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def nfc_class_zero_in_reference():
    class Property(ctypes.Structure):
        _fields_ = [("category", ctypes.c_int16), ("combining_class", ctypes.c_int16)]

    utf8proc = ctypes.CDLL(ctypes.util.find_library("utf8proc") or "libutf8proc.so.2")
    utf8proc.utf8proc_get_property.restype = ctypes.POINTER(Property)
    nfc = normalizers.NFC()
    overlay = "\u0334"  # class 1: a mark of class > 1 before it is moved after it, unless class 0
    out = []
    for cp in ALL:
        if utf8proc.utf8proc_get_property(cp).contents.combining_class > 1:
            s = "-" + chr(cp) + overlay
            if nfc.normalize_str(s) == s:
                out.append(cp)
    return out


def main():
    for prop, name in (("L", "kLetters"), ("M", "kMarks"), ("N", "kNumbers"), ("Nd", "kDecimalNumbers"),
                       ("Alphabetic", "kAlphabetic")):
        ref, sys_ = reference_class(prop), system_class(prop)
        print(f"// \\p{{{prop}}}: reference {len(ref)}, system {len(sys_)}, system-only {len(sys_ - ref)}")
        print(f"const Ranges {name} = {{")
        print("    " + ", ".join("{0x%x, 0x%x}" % (a, b) for a, b in ranges(ref - sys_)))
        print("};")
    zero = nfc_class_zero_in_reference()
    print(f"constexpr std::array<uint32_t, {len(zero)}> kClassZeroInReference = {{")
    print("    " + ", ".join(hex(cp) for cp in zero))
    print("};")


if __name__ == "__main__":
    main()
