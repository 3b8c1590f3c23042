"""A small ctypes layer over the CUDA driver (libcuda.so.1): load a PTX or
cubin image into the current context and launch its kernels with packed
arguments on a given stream.

It works in the context that PyTorch or Triton made current (the device's
primary context); with none current it makes the primary context of the
current device (device 0 unless `device=` says otherwise) current, as the
CUDA runtime does. Streams are CUstream handles as integers, as PyTorch
gives them (`torch.cuda.current_stream().cuda_stream`); 0 is the legacy
default stream.

    mod = gpuopt.cuda.load_module(ptx_text)          # cached per image and context
    fn = mod.function("my_kernel")
    gpuopt.cuda.launch(fn, grid=(g, 1, 1), block=(256, 1, 1), smem=0,
                       stream=stream, args=[ctypes.c_uint64(ptr), ctypes.c_uint32(n)])

Every failing driver call raises CudaError with the call's name, the
CUresult and the driver's own name and description of it. The library is
`$GPUOPT_LIBCUDA` when set (a stand-in driver, for tests), else
libcuda.so.1.
"""

import ctypes
import hashlib
import os
import threading

CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
# Above this, static plus dynamic shared memory needs the opt-in attribute.
DEFAULT_SMEM_LIMIT = 48 * 1024

_LIB = None
_LIB_LOCK = threading.Lock()
_MODULES = {}  # (sha256 of image, context handle) -> Module
_MODULES_LOCK = threading.Lock()


class CudaError(RuntimeError):
    """A CUDA driver call failed: `call`, `code` (CUresult), `name`, `text`."""

    def __init__(self, call, code, name, text):
        self.call, self.code, self.name, self.text = call, code, name, text
        super().__init__(f"{call} failed: {name} ({code}): {text}")


def _lib():
    global _LIB
    with _LIB_LOCK:
        if _LIB is None:
            try:
                path = os.environ.get("GPUOPT_LIBCUDA") or "libcuda.so.1"
                lib = ctypes.CDLL(path)
            except OSError as e:
                raise CudaError(f"dlopen({path})", -1, "no driver", str(e)) from e
            c_int, vp, c_uint = ctypes.c_int, ctypes.c_void_p, ctypes.c_uint
            sigs = {
                "cuInit": [c_uint],
                "cuGetErrorName": [c_int, ctypes.POINTER(ctypes.c_char_p)],
                "cuGetErrorString": [c_int, ctypes.POINTER(ctypes.c_char_p)],
                "cuCtxGetCurrent": [ctypes.POINTER(vp)],
                "cuCtxSetCurrent": [vp],
                "cuDeviceGet": [ctypes.POINTER(c_int), c_int],
                "cuDevicePrimaryCtxRetain": [ctypes.POINTER(vp), c_int],
                "cuModuleLoadDataEx": [ctypes.POINTER(vp), vp, c_uint, vp, vp],
                "cuModuleUnload": [vp],
                "cuModuleGetFunction": [ctypes.POINTER(vp), vp, ctypes.c_char_p],
                "cuFuncGetAttribute": [ctypes.POINTER(c_int), c_int, vp],
                "cuFuncSetAttribute": [vp, c_int, c_int],
                "cuLaunchKernel": [vp, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
                                   vp, ctypes.POINTER(vp), ctypes.POINTER(vp)],
                "cuStreamSynchronize": [vp],
                "cuMemsetD8Async": [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t, vp],
            }
            for name, argtypes in sigs.items():
                fn = getattr(lib, name, None)
                if fn is None and name in ("cuCtxGetCurrent", "cuMemsetD8Async"):
                    continue  # current_context() retains the primary context;
                    # memset_async says it is missing
                if fn is None:
                    raise CudaError(name, -1, "missing", f"{path} does not export {name}")
                fn.argtypes = argtypes
                fn.restype = c_int
                setattr(lib, "_" + name, fn)
            _LIB = lib
    return _LIB


def _describe(code):
    lib = _lib()
    name, text = ctypes.c_char_p(), ctypes.c_char_p()
    if lib._cuGetErrorName(code, ctypes.byref(name)) != 0 or not name.value:
        return "CUDA_ERROR_UNKNOWN", "unknown CUresult"
    lib._cuGetErrorString(code, ctypes.byref(text))
    return name.value.decode(), (text.value or b"").decode()


def check(code, call):
    """Raises CudaError unless `code` is CUDA_SUCCESS."""
    if code != 0:
        name, text = _describe(code)
        raise CudaError(call, code, name, text)


def current_context(device=None):
    """The current CUcontext handle; with none current, the primary context
    of `device` (default 0), made current."""
    lib = _lib()
    check(lib._cuInit(0), "cuInit")
    ctx = ctypes.c_void_p()
    if hasattr(lib, "_cuCtxGetCurrent"):
        check(lib._cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if ctx.value:
            return ctx.value
    dev = ctypes.c_int()
    check(lib._cuDeviceGet(ctypes.byref(dev), int(device or 0)), "cuDeviceGet")
    check(lib._cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(lib._cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx.value


class Function:
    """A kernel of a loaded Module."""

    def __init__(self, module, name, handle):
        self.module, self.name, self.handle = module, name, handle
        self._smem_optin = 0

    def attribute(self, attr):
        value = ctypes.c_int()
        check(_lib()._cuFuncGetAttribute(ctypes.byref(value), attr, ctypes.c_void_p(self.handle)),
              f"cuFuncGetAttribute({self.name}, {attr})")
        return value.value

    @property
    def static_smem(self):
        return self.attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)

    @property
    def registers(self):
        return self.attribute(CU_FUNC_ATTRIBUTE_NUM_REGS)

    def allow_dynamic_smem(self, nbytes):
        """Opts in to `nbytes` of dynamic shared memory when it and the static
        shared memory exceed 48 KiB together (once per size reached)."""
        if nbytes <= self._smem_optin:
            return
        if nbytes + self.static_smem > DEFAULT_SMEM_LIMIT:
            check(_lib()._cuFuncSetAttribute(ctypes.c_void_p(self.handle),
                                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             int(nbytes)),
                  f"cuFuncSetAttribute({self.name}, MAX_DYNAMIC_SHARED_SIZE_BYTES, {nbytes})")
        self._smem_optin = nbytes


class Module:
    """A PTX or cubin image loaded into a context."""

    def __init__(self, image, context):
        self.context = context
        data = image.encode() + b"\0" if isinstance(image, str) else bytes(image)
        self._data = ctypes.create_string_buffer(data, len(data))
        handle = ctypes.c_void_p()
        check(_lib()._cuModuleLoadDataEx(ctypes.byref(handle),
                                         ctypes.cast(self._data, ctypes.c_void_p), 0, None, None),
              "cuModuleLoadDataEx")
        self.handle = handle.value
        self._functions = {}

    def function(self, name):
        fn = self._functions.get(name)
        if fn is None:
            handle = ctypes.c_void_p()
            check(_lib()._cuModuleGetFunction(ctypes.byref(handle), ctypes.c_void_p(self.handle),
                                              name.encode()),
                  f"cuModuleGetFunction({name})")
            fn = self._functions[name] = Function(self, name, handle.value)
        return fn


def load_module(image, device=None):
    """The Module of `image` (PTX text or cubin bytes) in the current context,
    loaded once per image and context."""
    ctx = current_context(device)
    data = image.encode() if isinstance(image, str) else bytes(image)
    key = (hashlib.sha256(data).hexdigest(), ctx)
    with _MODULES_LOCK:
        mod = _MODULES.get(key)
        if mod is None:
            mod = _MODULES[key] = Module(image, ctx)
    return mod


def _dim3(v, what):
    v = tuple(int(x) for x in (v if isinstance(v, (tuple, list)) else (v,)))
    if not 1 <= len(v) <= 3 or any(x < 1 for x in v):
        raise ValueError(f"{what} {v}: 1 to 3 positive dimensions")
    return v + (1,) * (3 - len(v))


def launch(function, grid, block, smem=0, stream=0, args=()):
    """Launches `function` with cuLaunchKernel. `args` are ctypes values, one
    per kernel parameter, in order (the driver copies each by its declared
    size); `stream` a CUstream handle as an int."""
    gx, gy, gz = _dim3(grid, "grid")
    bx, by, bz = _dim3(block, "block")
    function.allow_dynamic_smem(int(smem))
    n = len(args)
    params = (ctypes.c_void_p * max(n, 1))(
        *[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
    check(_lib()._cuLaunchKernel(ctypes.c_void_p(function.handle), gx, gy, gz, bx, by, bz,
                                 int(smem), ctypes.c_void_p(int(stream or 0)),
                                 params if n else None, None),
          f"cuLaunchKernel({function.name}, grid {gx}x{gy}x{gz}, block {bx}x{by}x{bz}, "
          f"smem {smem})")


def memset_async(ptr, value, nbytes, stream=0):
    """cuMemsetD8Async: `nbytes` bytes at device address `ptr` set to
    `value`, in stream order (no kernel launch)."""
    lib = _lib()
    fn = getattr(lib, "_cuMemsetD8Async", None)
    if fn is None:
        raise CudaError("cuMemsetD8Async", -1, "missing", "the driver does not export it")
    check(fn(int(ptr), int(value) & 0xFF, int(nbytes), ctypes.c_void_p(int(stream or 0))),
          "cuMemsetD8Async")


def synchronize(stream=0):
    check(_lib()._cuStreamSynchronize(ctypes.c_void_p(int(stream or 0))), "cuStreamSynchronize")
