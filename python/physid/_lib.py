"""ctypes declarations of libphysid.so's public C API (include/physid.h, include/physid/*.h).

Only opaque pointers cross the boundary: the model's and data's arrays are reached by name through
phys_model_field / phys_data_field (include/physid/fields.h), so this file does not depend on the C structs'
layout, which changes between versions; physLog (the error sink) is the one struct declared here.
"""
import ctypes
import ctypes.util
import glob
import os
import shutil

_c_double_p = ctypes.POINTER(ctypes.c_double)
_c_int_p = ctypes.POINTER(ctypes.c_int)
SONAME = "libphysid.so.0.1"


class Log(ctypes.Structure):
    """physLog of physid.h: the status and message of the last failing call, and the warnings."""
    _fields_ = [("status", ctypes.c_int), ("error", ctypes.c_char * 1024), ("nwarning", ctypes.c_int),
                ("nkind", ctypes.c_int), ("warning", (ctypes.c_char * 256) * 16), ("count", ctypes.c_int * 16),
                ("kind", ctypes.c_char_p * 16), ("quiet", ctypes.c_int)]


class LoadOptions(ctypes.Structure):
    """physLoadOptions of physid.h."""
    _fields_ = [("urdf_floating", ctypes.c_int), ("strict_mesh", ctypes.c_int),
                ("urdf_self_collision", ctypes.c_int), ("urdf_actuate", ctypes.c_int),
                ("add", ctypes.POINTER(ctypes.c_char_p)), ("nadd", ctypes.c_int),
                ("vertex_geoms", ctypes.POINTER(ctypes.c_char_p)), ("nvertex_geoms", ctypes.c_int)]


class Param(ctypes.Structure):
    """physParam of physid/params.h: one entry of a table."""
    _fields_ = [("kind", ctypes.c_int), ("id", ctypes.c_int), ("adr", ctypes.c_int), ("size", ctypes.c_int),
                ("spec", ctypes.c_int), ("tied", ctypes.c_int), ("name", ctypes.c_char * 160)]


class ParamTable(ctypes.Structure):
    """physParamTable of physid/params.h (the caller owns the struct, the library its arrays)."""
    _fields_ = [("n", ctypes.c_int), ("ntheta", ctypes.c_int), ("param", ctypes.POINTER(Param)),
                ("input", _c_double_p), ("insens", _c_double_p), ("held", ctypes.POINTER(ctypes.c_ubyte))]


LOSS_FN = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p, ctypes.c_int, _c_double_p, _c_double_p, _c_double_p,
                           _c_double_p)

LOSS_ACT_FN = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p, ctypes.c_int, _c_double_p, _c_double_p,
                               _c_double_p, _c_double_p, _c_double_p, _c_double_p)


def library_path():
    """Where libphysid.so is taken from: $PHYSID_LIBRARY; else beside the `physid` command on PATH (a build
    tree: build/libphysid.so; an install: PREFIX/bin/physid and PREFIX/lib*/libphysid.so); else the dynamic
    loader's search (ldconfig, LD_LIBRARY_PATH)."""
    env = os.environ.get("PHYSID_LIBRARY")
    if env:
        return env
    cli = shutil.which("physid")
    if cli:
        bindir = os.path.dirname(os.path.realpath(cli))
        for d in (bindir, os.path.join(bindir, "..", "lib"), os.path.join(bindir, "..", "lib64"),
                  *glob.glob(os.path.join(bindir, "..", "lib", "*-linux-gnu"))):
            cand = os.path.join(d, SONAME)
            if os.path.exists(cand):
                return os.path.normpath(cand)
    return ctypes.util.find_library("physid") or SONAME


def _declare(lib):
    P, I, D, S, V = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_size_t, None
    dp, lp = _c_double_p, ctypes.POINTER(Log)
    tp = ctypes.POINTER(ParamTable)
    table = {
        "phys_version": (ctypes.c_char_p, []),
        "phys_status_str": (ctypes.c_char_p, [I]),
        "phys_load": (P, [ctypes.c_char_p, ctypes.POINTER(LoadOptions), lp]),
        "phys_free_model": (V, [P]),
        "phys_copy_model": (P, [P]),
        "phys_make_data": (P, [P]),
        "phys_free_data": (V, [P]),
        "phys_reset_data": (V, [P, P]),
        "phys_reset_keyframe": (I, [P, P, I]),
        "phys_forward": (V, [P, P]),
        "phys_step": (V, [P, P]),
        "phys_name2id": (I, [P, ctypes.c_char_p, ctypes.c_char_p]),
        "phys_model_size": (I, [P, ctypes.c_char_p]),
        "phys_model_field": (P, [P, ctypes.c_char_p, _c_int_p, _c_int_p, _c_int_p]),
        "phys_data_field": (P, [P, ctypes.c_char_p, _c_int_p, _c_int_p, _c_int_p]),
        "phys_field_name": (ctypes.c_char_p, [I, I]),
        "phys_step_jacobian": (I, [P, P, dp, dp]),
        "phys_step_jacobian_fd": (I, [P, P, D, dp, dp]),
        "phys_step_vjp": (I, [P, P, dp, dp, dp]),
        "phys_step_param_jacobian": (I, [P, P, tp, dp]),
        "phys_step_param_vjp": (I, [P, P, tp, dp, dp]),
        "phys_param_table_build": (I, [tp, P, ctypes.POINTER(ctypes.c_char_p), I, lp]),
        "phys_param_table_free": (V, [tp]),
        "phys_param_get": (V, [tp, P, dp]),
        "phys_param_set": (I, [tp, P, dp]),
        "phys_param_bounds": (V, [tp, dp, dp]),
        "phys_rollout_worksize": (S, [P, I, I, I]),
        "phys_rollout_grad": (I, [P, P, tp, I, I, dp, LOSS_FN, P, dp, dp, dp, dp, dp, lp]),
        "phys_rollout_grad_act": (I, [P, P, tp, I, I, dp, LOSS_ACT_FN, P, dp, dp, dp, dp, dp, lp]),
        "phys_rollout_vjp": (I, [P, P, tp, I, I, P, P, P, P, P, P, P, P, lp]),
        "phys_step_batch": (I, [P, P, I, I, P, P, P, lp]),
        "phys_step_vjp_batch": (I, [P, P, I, tp, I, P, P, P, P, P, P, lp]),
        "phys_tangent_bar_to_qpos": (V, [P, P, P, P]),
        "phys_step_vjp_batch_qpos": (I, [P, P, I, tp, I, P, P, P, P, P, P, P, lp]),
        "phys_rollout_batch": (I, [P, P, I, I, I, P, P, P, lp]),
        "phys_rollout_states": (I, [P, P, I, P, P, lp]),
        "phys_rollout_states_vjp": (I, [P, P, tp, I, P, P, P, P, P, P, lp]),
    }
    for name, (res, args) in table.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


_lib = None


def lib():
    """libphysid.so, loaded once with its functions declared."""
    global _lib
    if _lib is None:
        path = library_path()
        try:
            _lib = _declare(ctypes.CDLL(path))
        except OSError as e:
            raise ImportError(f"physid: cannot load the C library {path} ({e}); set PHYSID_LIBRARY to "
                              f"libphysid.so's path or install physid (docs/python.md)") from None
    return _lib
