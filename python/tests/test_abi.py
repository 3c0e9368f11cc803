"""The binding against the public headers (include/greenctx.h, greenctx_claims.h and
greenctx_controller.h): every function the package binds has the header's return and argument
types, every struct it declares has the header's fields in order and the C compiler's sizes and
offsets, every enum value it uses is the header's. No driver needed.
"""
import ctypes
import os
import re
import shutil
import subprocess

import pytest

from greenctx import _capi

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HEADERS = ("greenctx.h", "greenctx_claims.h", "greenctx_controller.h")
PATHS = [os.path.join(ROOT, "include", h) for h in HEADERS]
if not all(os.path.exists(p) for p in PATHS):
    pytest.skip(f"no {PATHS}: run from a checkout", allow_module_level=True)


def _header_text(path):
    with open(path) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r"\\\n", " ", text)


TEXTS = {h: _header_text(p) for h, p in zip(HEADERS, PATHS)}
TEXT = "\n".join(TEXTS.values())
OPAQUE = set(re.findall(r"typedef struct (gctx_\w+) \1;", TEXT))  # gctx_partition, ...
CUDA_HANDLES = set(re.findall(r"typedef struct CU\w+ \*(CU\w+);", TEXT))
ENUMS = set(re.findall(r"typedef enum \w+ \{.*?\} (\w+);", TEXT, flags=re.S))
STRUCT_BODIES = dict((name, body) for body, name in
                     re.findall(r"typedef struct \w+ \{(.*?)\} (\w+);", TEXT, flags=re.S))


def _type_of(decl):
    """'const gctx_partition *input' -> 'gctx_partition*' (parameter name dropped)."""
    decl = re.sub(r"\bconst\b", " ", decl).strip()
    m = re.match(r"^(.*?)(\w+)$", decl)
    if m and m.group(1).strip() and not m.group(1).strip().endswith(("struct", "enum")):
        base = m.group(1)
    else:
        base = decl
    if base.replace("*", "").strip() == "":  # no parameter name: 'void'
        base = decl
    return re.sub(r"\s+", "", base)


def _ctype_for(c_type):
    """What the binding must declare for a C type of the header."""
    stars = c_type.count("*")
    base = c_type.replace("*", "")
    if stars == 0:
        if base == "void":
            return None
        if base in CUDA_HANDLES:
            return ctypes.c_void_p
        if base in ("int", "gctx_status") or base in ENUMS:
            return ctypes.c_int
        if base == "unsigned":
            return ctypes.c_uint
        if base == "double":
            return ctypes.c_double
        if base == "size_t":
            return ctypes.c_size_t
        raise AssertionError(f"no rule for {c_type}")
    if stars == 1:
        if base == "char":
            return ctypes.c_char_p
        if base in OPAQUE:
            return ctypes.c_void_p
        if base in _capi.STRUCTS:
            return ctypes.POINTER(_capi.STRUCTS[base])
        if base in CUDA_HANDLES:
            return ctypes.POINTER(ctypes.c_void_p)
        inner = _ctype_for(base)
        return ctypes.POINTER(inner)
    if stars == 2 and base in OPAQUE:
        return ctypes.POINTER(ctypes.c_void_p)
    raise AssertionError(f"no rule for {c_type}")


def header_functions(text=TEXT):
    out = {}
    for ret, name, args in re.findall(r"GCTX_API\s+([\w\s\*]+?)\s*\b(gctx_\w+)\s*\(([^)]*)\)\s*;",
                                      text):
        ret = re.sub(r"\s+", "", re.sub(r"\bconst\b", " ", ret))
        arg_types = [] if args.strip() in ("", "void") else [_type_of(a) for a in args.split(",")]
        out[name] = (ret, arg_types)
    return out


FUNCTIONS = header_functions()


def test_the_header_parses():
    assert len(FUNCTIONS) >= 50 and "gctx_partition_split" in FUNCTIONS
    assert FUNCTIONS["gctx_partition_split"][1][:3] == ["gctx_partition*", "gctx_group*",
                                                          "unsigned"]
    assert {"gctx_partition", "gctx_context", "gctx_stream", "gctx_event"} <= OPAQUE
    assert "gctx_claim" in OPAQUE and "gctx_claim_acquire" in FUNCTIONS


def test_every_claims_function_is_bound():
    """The tenants API, all of it, through the package."""
    declared = {n for n in FUNCTIONS if n.startswith(("gctx_claim_", "gctx_mps_"))}
    assert len(declared) == 24
    assert declared <= set(_capi.SIGNATURES)


def test_each_room_is_declared_in_its_header():
    """Claims and MPS in greenctx_claims.h, the controller in greenctx_controller.h, neither in
    the core's greenctx.h."""
    rooms = {h: set(header_functions(TEXTS[h])) for h in HEADERS}
    assert {n for n in FUNCTIONS if n.startswith(("gctx_claim_", "gctx_mps_"))} \
        <= rooms["greenctx_claims.h"]
    assert rooms["greenctx_controller.h"] == {n for n in FUNCTIONS
                                              if n.startswith("gctx_controller_")}
    assert not {n for n in rooms["greenctx.h"]
                if n.startswith(("gctx_claim_", "gctx_mps_", "gctx_controller_"))}
    assert sum(map(len, rooms.values())) == len(FUNCTIONS)


def test_every_status_has_its_exception():
    from greenctx import _errors
    names = set(re.findall(r"X\((ERROR_\w+),", TEXT))
    assert {"ERROR_BUSY", "ERROR_REGISTRY"} <= names
    assert {f"GCTX_{n}" for n in names} == set(_errors._BY_STATUS)


@pytest.mark.parametrize("name", sorted(_capi.SIGNATURES))
def test_bound_function_matches_header(name):
    assert name in FUNCTIONS, f"{name} is bound but declared in none of {HEADERS}"
    ret, args = FUNCTIONS[name]
    restype, argtypes = _capi.SIGNATURES[name]
    assert restype == _ctype_for(ret), f"{name} returns {ret}"
    assert len(argtypes) == len(args), f"{name}({', '.join(args)})"
    for i, (bound, c_type) in enumerate(zip(argtypes, args)):
        assert bound == _ctype_for(c_type), f"{name} argument {i}: {c_type}"


def test_the_loaded_library_has_every_bound_function():
    for name in _capi.SIGNATURES:
        assert getattr(_capi.lib, name).argtypes is not None


def _field_names(body):
    names = []
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        first, *more = [d.strip() for d in decl.split(",")]
        names.append(re.sub(r"\[.*\]", "", first).split()[-1].lstrip("*"))
        names.extend(re.sub(r"\[.*\]", "", d).lstrip("*") for d in more)
    return names


@pytest.mark.parametrize("name", sorted(_capi.STRUCTS))
def test_struct_fields_match_header(name):
    fields = [f[0] for f in _capi.STRUCTS[name]._fields_]
    assert fields == _field_names(STRUCT_BODIES[name])


def test_enum_values_match_header():
    header_values = dict((k, int(v)) for k, v in re.findall(r"\b(GCTX_\w+)\s*=\s*(\d+)", TEXT))
    header_values.update((k, int(v, 0)) for k, v in
                         re.findall(r"#define (GCTX_\w+) (0x[0-9a-fA-F]+|\d+)u?\b", TEXT))
    used = {k: v for k, v in vars(_capi).items() if k.startswith("GCTX_")}
    assert used and {k: header_values.get(k) for k in used} == used


def _compiler():
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    return cc


def test_struct_layouts_match_the_c_compiler(tmp_path):
    cc = _compiler()
    if not cc:
        pytest.skip("no C compiler to check struct layouts with")
    lines = []
    for name, cls in sorted(_capi.STRUCTS.items()):
        lines.append(f'printf("{name} %zu %zu\\n", sizeof({name}), _Alignof({name}));')
        for field, _ in cls._fields_:
            lines.append(f'printf("{name}.{field} %zu %zu\\n", offsetof({name}, {field}), '
                         f'sizeof((({name} *)0)->{field}));')
    src = tmp_path / "layout.c"
    src.write_text("#include <stddef.h>\n#include <stdio.h>\n#include <greenctx_claims.h>\n"
                   "#include <greenctx_controller.h>\n"
                   "int main(void) {\n" + "\n".join(lines) + "\nreturn 0;\n}\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "include"), str(src), "-o",
                    str(exe)], check=True)
    got = dict(line.rsplit(" ", 2)[0:1] + [tuple(map(int, line.split()[1:]))]
               for line in subprocess.run([str(exe)], check=True, capture_output=True,
                                          text=True).stdout.splitlines())
    for name, cls in _capi.STRUCTS.items():
        assert got[name] == (ctypes.sizeof(cls), ctypes.alignment(cls)), name
        for field, ftype in cls._fields_:
            assert got[f"{name}.{field}"] == (getattr(cls, field).offset, ctypes.sizeof(ftype)), \
                f"{name}.{field}"
