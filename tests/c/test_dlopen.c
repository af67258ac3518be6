/*
 * The design card's first user: a C program that loads libstridemem only with
 * dlopen/dlsym (no link-time dependency on it), checks the run-time version
 * against the header it was built with, and runs a view/copy round trip.
 *
 * The header is included for its types and version macros only: every sm_
 * function is reached through a dlsym'd pointer, never called directly.
 * The library path comes from STRIDEMEM_LIB_PATH (set by tests/CMakeLists.txt);
 * the environment variable STRIDEMEM_LIB overrides it.
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stridemem.h"

#ifndef STRIDEMEM_LIB_PATH
#define STRIDEMEM_LIB_PATH "libstridemem.so"
#endif

/* The entry points this program uses, as function pointer types. */
typedef sm_status (*version_fn)(int*, int*, int*);
typedef const char* (*status_string_fn)(sm_status);
typedef const char* (*last_error_fn)(void);
typedef sm_status (*from_host_fn)(const void*, const int64_t*, int32_t, sm_dtype, sm_device,
                                  sm_tensor*);
typedef sm_status (*transpose_fn)(sm_tensor, int32_t, int32_t, sm_tensor*);
typedef sm_status (*contiguous_fn)(sm_tensor, sm_memory_format, sm_tensor*, int*);
typedef sm_status (*view_fn)(sm_tensor, const int64_t*, int32_t, sm_tensor*);
typedef sm_status (*copy_to_host_fn)(sm_tensor, void*, size_t);
typedef sm_status (*dims_fn)(sm_tensor, int64_t*, int32_t);
typedef sm_status (*is_contiguous_fn)(sm_tensor, sm_memory_format, int*);
typedef sm_status (*same_storage_fn)(sm_tensor, sm_tensor, int*);
typedef sm_status (*release_fn)(sm_tensor);
typedef sm_status (*live_handles_fn)(int64_t*, int64_t*, int64_t*);

static struct {
    version_fn version;
    status_string_fn status_string;
    last_error_fn last_error;
    from_host_fn from_host;
    transpose_fn transpose;
    contiguous_fn contiguous;
    view_fn view;
    copy_to_host_fn copy_to_host;
    dims_fn shape;
    dims_fn strides;
    is_contiguous_fn is_contiguous;
    same_storage_fn same_storage;
    release_fn tensor_release;
    live_handles_fn debug_live_handles;
} api;

static int g_failures = 0;

#define EXPECT(cond)                                                              \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);   \
            ++g_failures;                                                         \
        }                                                                         \
    } while (0)

/* A failed call: its status name and the library's message, then stop. */
#define REQUIRE_OK(call)                                                          \
    do {                                                                          \
        sm_status st_ = (call);                                                   \
        if (st_ != SM_OK) {                                                       \
            fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,   \
                    api.status_string(st_), api.last_error());                    \
            return 1;                                                             \
        }                                                                         \
    } while (0)

/* dlsym returns an object pointer; ISO C has no cast from it to a function
 * pointer, so the bytes are copied (POSIX guarantees they are compatible). */
static int load(void* lib, const char* name, void* fn_ptr, size_t fn_size)
{
    void* sym;
    dlerror();
    sym = dlsym(lib, name);
    if (sym == NULL) {
        const char* err = dlerror();
        fprintf(stderr, "dlsym(%s) failed: %s\n", name, err ? err : "NULL symbol");
        return 0;
    }
    if (fn_size != sizeof sym) {
        fprintf(stderr, "function pointers and void* differ in size\n");
        return 0;
    }
    memcpy(fn_ptr, &sym, fn_size);
    return 1;
}

#define LOAD(field, name) ok &= load(lib, name, &api.field, sizeof api.field)

static int load_api(void* lib)
{
    int ok = 1;
    LOAD(version, "sm_version");
    LOAD(status_string, "sm_status_string");
    LOAD(last_error, "sm_last_error");
    LOAD(from_host, "sm_from_host");
    LOAD(transpose, "sm_transpose");
    LOAD(contiguous, "sm_contiguous");
    LOAD(view, "sm_view");
    LOAD(copy_to_host, "sm_copy_to_host");
    LOAD(shape, "sm_shape");
    LOAD(strides, "sm_strides");
    LOAD(is_contiguous, "sm_is_contiguous");
    LOAD(same_storage, "sm_same_storage");
    LOAD(tensor_release, "sm_tensor_release");
    LOAD(debug_live_handles, "sm_debug_live_handles");
    return ok;
}

static int round_trip(void)
{
    const int64_t shape[2] = {3, 4};
    const int64_t flat[1] = {12};
    int32_t host[3][4], back_t[4][3], back_c[4][3];
    int64_t dims[2], strides[2], live_t = -1, live_s = -1, live_st = -1;
    sm_device cpu;
    sm_tensor a = NULL, at = NULL, c = NULL, refused = NULL;
    int flag = -1, i, j;
    sm_status st;
    const char* msg;

    cpu.type = SM_DEVICE_CPU;
    cpu.index = 0;
    for (i = 0; i < 3; ++i)
        for (j = 0; j < 4; ++j) host[i][j] = 10 * i + j;

    REQUIRE_OK(api.from_host(host, shape, 2, SM_INT32, cpu, &a));
    REQUIRE_OK(api.strides(a, strides, 2));
    EXPECT(strides[0] == 4 && strides[1] == 1);

    /* The transpose is a view: shape and strides swapped, same storage. */
    REQUIRE_OK(api.transpose(a, 0, 1, &at));
    REQUIRE_OK(api.shape(at, dims, 2));
    REQUIRE_OK(api.strides(at, strides, 2));
    EXPECT(dims[0] == 4 && dims[1] == 3);
    EXPECT(strides[0] == 1 && strides[1] == 4);
    REQUIRE_OK(api.same_storage(a, at, &flag));
    EXPECT(flag == 1);
    REQUIRE_OK(api.is_contiguous(at, SM_CONTIGUOUS, &flag));
    EXPECT(flag == 0);

    /* contiguous() of it is a row-major copy in a new storage. */
    flag = -1;
    REQUIRE_OK(api.contiguous(at, SM_CONTIGUOUS, &c, &flag));
    EXPECT(flag == 1); /* the call says it copied */
    REQUIRE_OK(api.shape(c, dims, 2));
    REQUIRE_OK(api.strides(c, strides, 2));
    EXPECT(dims[0] == 4 && dims[1] == 3);
    EXPECT(strides[0] == 3 && strides[1] == 1);
    REQUIRE_OK(api.is_contiguous(c, SM_CONTIGUOUS, &flag));
    EXPECT(flag == 1);
    REQUIRE_OK(api.same_storage(at, c, &flag));
    EXPECT(flag == 0);

    /* Both come out of the library as the transpose, in row-major order. */
    memset(back_t, 0xff, sizeof back_t);
    memset(back_c, 0xff, sizeof back_c);
    REQUIRE_OK(api.copy_to_host(at, back_t, sizeof back_t));
    REQUIRE_OK(api.copy_to_host(c, back_c, sizeof back_c));
    for (i = 0; i < 4; ++i)
        for (j = 0; j < 3; ++j) {
            EXPECT(back_t[i][j] == host[j][i]);
            EXPECT(back_c[i][j] == host[j][i]);
        }

    /* Errors through the dlsym'd sm_last_error: view() of the transpose
     * cannot flatten it, and says so; nothing is written to out. */
    st = api.view(at, flat, 1, &refused);
    EXPECT(st == SM_ERR_SHAPE);
    EXPECT(refused == NULL);
    msg = api.last_error();
    EXPECT(msg != NULL && msg[0] != '\0');
    printf("sm_view on the transpose: %s: %s\n", api.status_string(st), msg ? msg : "(null)");

    /* A destination smaller than the tensor is refused, not overrun. */
    st = api.copy_to_host(c, back_c, sizeof back_c - 1);
    EXPECT(st != SM_OK);
    msg = api.last_error();
    EXPECT(msg != NULL && msg[0] != '\0');

    /* A released handle is detected. */
    REQUIRE_OK(api.tensor_release(c));
    st = api.shape(c, dims, 2);
    EXPECT(st == SM_ERR_INVALID_HANDLE);

    REQUIRE_OK(api.tensor_release(at));
    REQUIRE_OK(api.tensor_release(a));
    REQUIRE_OK(api.debug_live_handles(&live_t, &live_s, &live_st));
    EXPECT(live_t == 0 && live_s == 0 && live_st == 0);
    return 0;
}

int main(void)
{
    const char* path = getenv("STRIDEMEM_LIB");
    void* lib;
    int major = -1, minor = -1, patch = -1;
    if (path == NULL || path[0] == '\0') path = STRIDEMEM_LIB_PATH;

#ifdef RTLD_NOLOAD
    /* Only informative: the build may still link this program with the
     * library, which the program does not need. */
    lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib != NULL) {
        printf("note: %s was already loaded before dlopen (linked at build time)\n", path);
        dlclose(lib);
    }
#endif

    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "dlopen(%s) failed: %s\n", path, dlerror());
        return 1;
    }
    if (!load_api(lib)) return 1;

    if (api.version(&major, &minor, &patch) != SM_OK) {
        fprintf(stderr, "sm_version failed: %s\n", api.last_error());
        return 1;
    }
    printf("loaded %s: run-time %d.%d.%d, header %d.%d.%d\n", path, major, minor, patch,
           SM_VERSION_MAJOR, SM_VERSION_MINOR, SM_VERSION_PATCH);
    EXPECT(major == SM_VERSION_MAJOR);
    EXPECT(minor == SM_VERSION_MINOR);
    EXPECT(patch == SM_VERSION_PATCH);

    if (round_trip() != 0) ++g_failures;

    if (dlclose(lib) != 0) {
        fprintf(stderr, "dlclose failed: %s\n", dlerror());
        ++g_failures;
    }
    if (g_failures) {
        fprintf(stderr, "test_dlopen: %d failure(s)\n", g_failures);
        return 1;
    }
    printf("test_dlopen: OK\n");
    return 0;
}
