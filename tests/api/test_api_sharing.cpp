// Storages shared between processes (stridemem.h, "Processes"): shared
// memory created or moved once, exported as fd + descriptor, imported by a
// forked child over a Unix socket (SCM_RIGHTS), every malformed descriptor
// or fd refused with nothing mapped and no fd kept, a SIGKILLed child
// leaking nothing in the parent, and no page copied by an import.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>  // socketpair
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "api_test_util.hpp"
#include "process_util.h"
#include "stridemem_dlpack.h"
#include "test_cuda_util.hpp"

extern char** environ;

using namespace smt;

namespace {

// ---- process resources ----

int count_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - 1;  // the directory's own fd
}

// stridemem's shared-memory mappings ("/memfd:stridemem (deleted)" in
// /proc/self/maps). Only ours: the allocator under a sanitizer maps regions
// of its own whenever it likes (an error message's string is enough).
int count_maps() {
  std::ifstream f("/proc/self/maps");
  int n = 0;
  std::string line;
  while (std::getline(f, line))
    if (line.find("memfd:stridemem") != std::string::npos) ++n;
  return n;
}

struct Resources {
  int fds = count_fds();
  int maps = count_maps();
};

// ---- the descriptor and its fd over a Unix socket (the OS's fd passing) ----

bool send_share(int sock, const sm_share_desc& d, int fd) {
  return sm_send_with_fd(sock, &d, sizeof d, fd) == 1;
}
bool recv_share(int sock, sm_share_desc* d, int* fd) {
  return sm_recv_with_fd(sock, d, sizeof *d, fd) == 1;
}

// Runs child(sock) in a forked process and parent(sock, pid) here; returns
// child's return value, or -signal when the child was killed before it
// could report. The child never returns into the test framework: it reports
// its value through a pipe and ends with SIGKILL, so that no exit-time
// machinery runs in a copy of this process (a leak checker, valgrind's or
// LeakSanitizer's, would judge the parent's objects it inherited).
int with_child(const std::function<int(int)>& child,
               const std::function<void(int, pid_t)>& parent) {
  int sv[2], report[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
      pipe2(report, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "socketpair/pipe: " << std::strerror(errno);
    return -1000;
  }
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return -1000;
  }
  if (pid == 0) {
    close(sv[0]);
    close(report[0]);
    int rc = 100;
    try {
      rc = child(sv[1]);
    } catch (...) {
      rc = 101;
    }
    std::fflush(nullptr);
    if (write(report[1], &rc, sizeof rc) != static_cast<ssize_t>(sizeof rc)) _exit(102);
    kill(getpid(), SIGKILL);
    _exit(103);  // not reached
  }
  close(sv[1]);
  close(report[1]);
  parent(sv[0], pid);
  close(sv[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int rc = 0;
  const ssize_t got = read(report[0], &rc, sizeof rc);
  close(report[0]);
  if (got == static_cast<ssize_t>(sizeof rc)) return rc;
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return 1000 + WEXITSTATUS(status);  // ended without reporting
}

// A desc + fd exported from t's storage.
struct Exported {
  sm_share_desc desc{};
  int fd = -1;
  ~Exported() {
    if (fd >= 0) close(fd);
  }
};

void export_tensor(sm_tensor t, Exported* e) {
  Storage s;
  ASSERT_EQ(sm_tensor_storage(t, s.out()), SM_OK) << sm_last_error();
  ASSERT_EQ(sm_storage_export(s, &e->desc, &e->fd), SM_OK) << sm_last_error();
}

// What sm_storage_export seals, for tests that forge descriptors: FNV-1a 64
// over the bytes before the checksum, as the header says.
uint64_t fnv1a(const sm_share_desc& d) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&d);
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < offsetof(sm_share_desc, checksum); ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}
void reseal(sm_share_desc* d) { d->checksum = fnv1a(*d); }

int is_shared(sm_tensor t) {
  int v = -1;
  EXPECT_EQ(sm_is_shared(t, &v), SM_OK) << sm_last_error();
  return v;
}

}  // namespace

// ---- in one process -----------------------------------------------------------------------

TEST(Sharing, EmptySharedIsZeroFilledAndExportable) {
  Tensor t;
  const int64_t shape[2] = {3, 5};
  ASSERT_EQ(sm_empty_shared(shape, 2, SM_FLOAT64, t.out()), SM_OK) << sm_last_error();
  EXPECT_EQ(is_shared(t), 1);
  EXPECT_EQ(read<double>(t), std::vector<double>(15, 0.0));
  expect_layout(t, {3, 5}, {5, 1}, 0);
  Exported e;
  export_tensor(t, &e);
  EXPECT_GE(e.fd, 0);
  EXPECT_EQ(e.desc.magic, SM_SHARE_MAGIC);
  EXPECT_EQ(e.desc.format, SM_SHARE_FORMAT);
  EXPECT_EQ(e.desc.struct_size, SM_SHARE_DESC_SIZE);
  EXPECT_EQ(e.desc.kind, SM_SHARE_MEMFD);
  EXPECT_EQ(e.desc.device.type, SM_DEVICE_CPU);
  EXPECT_EQ(e.desc.nbytes, 15 * 8);
  EXPECT_EQ(e.desc.object_bytes, 15 * 8);
  EXPECT_EQ(e.desc.offset, 0);
  EXPECT_EQ(e.desc.library_version, static_cast<uint32_t>(SM_VERSION_NUMBER));
  EXPECT_EQ(e.desc.exporter_pid, static_cast<int64_t>(getpid()));
  EXPECT_EQ(e.desc.checksum, fnv1a(e.desc));
  // The fd is the caller's, close-on-exec.
  EXPECT_NE(fcntl(e.fd, F_GETFD) & FD_CLOEXEC, 0);
  // The mapping says whose it is.
  std::ifstream maps("/proc/self/maps");
  std::stringstream ss;
  ss << maps.rdbuf();
  EXPECT_NE(ss.str().find("memfd:stridemem"), std::string::npos);
}

TEST(Sharing, ImportInTheSameProcessSharesPagesNotVersions) {
  Tensor t;
  const int64_t shape[2] = {4, 6};
  ASSERT_EQ(sm_empty_shared(shape, 2, SM_INT32, t.out()), SM_OK) << sm_last_error();
  Exported e;
  export_tensor(t, &e);
  Storage imported;
  ASSERT_EQ(sm_storage_import(&e.desc, e.fd, imported.out()), SM_OK) << sm_last_error();
  int shared = -1;
  ASSERT_EQ(sm_storage_is_shared(imported, &shared), SM_OK);
  EXPECT_EQ(shared, 1);
  int64_t size = -1;
  ASSERT_EQ(sm_storage_size(imported, &size), SM_OK);
  EXPECT_EQ(size, 4 * 6 * 4);
  // The same view rebuilt over the import: a column, strided.
  Tensor col, mine;
  const int64_t cshape[1] = {4}, cstride[1] = {6};
  ASSERT_EQ(sm_tensor_from_storage(imported, cshape, cstride, 1, 2, SM_INT32, col.out()), SM_OK)
      << sm_last_error();
  ASSERT_EQ(sm_select(t, 1, 2, mine.out()), SM_OK);
  EXPECT_NE(data_ptr_of(col), data_ptr_of(mine)) << "a second mapping, not the same address";
  ASSERT_EQ(sm_inplace_scalar(col, SM_OP_FILL, 7, 0), SM_OK) << sm_last_error();
  EXPECT_EQ(read<int32_t>(mine), std::vector<int32_t>(4, 7));
  std::vector<int32_t> all = read<int32_t>(t);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(all[i], i % 6 == 2 ? 7 : 0) << i;
  // Version counters stay per storage object, so per process.
  EXPECT_EQ(version_of(col), 1);
  EXPECT_EQ(version_of(t), 0);
  ASSERT_EQ(sm_inplace_scalar(t, SM_OP_ADD, 1, 0), SM_OK);
  EXPECT_EQ(read<int32_t>(col), std::vector<int32_t>(4, 8));
  // The import exports again: the same object.
  Exported again;
  ASSERT_EQ(sm_storage_export(imported, &again.desc, &again.fd), SM_OK) << sm_last_error();
  EXPECT_EQ(again.desc.object_id, e.desc.object_id);
  EXPECT_EQ(again.desc.nbytes, e.desc.nbytes);
}

TEST(Sharing, ShareMemoryMovesInPlaceAndEveryViewFollows) {
  Tensor t = iota<float>({6, 8});
  Tensor tt, row;
  ASSERT_EQ(sm_transpose(t, 0, 1, tt.out()), SM_OK);
  ASSERT_EQ(sm_select(t, 0, 3, row.out()), SM_OK);
  const std::vector<float> before = read<float>(tt);
  const void* old = data_ptr_of(t);
  sm_memory_stats_t st0{}, st1{};
  st0.struct_size = st1.struct_size = sizeof st0;
  ASSERT_EQ(sm_memory_stats(cpu(), &st0), SM_OK);
  EXPECT_EQ(is_shared(row), 0);
  Exported refused;
  {
    Storage s;
    ASSERT_EQ(sm_tensor_storage(t, s.out()), SM_OK);
    SM_EXPECT_STATUS(sm_storage_export(s, &refused.desc, &refused.fd), SM_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(sm_last_error()).find("sm_share_memory"), std::string::npos);
    EXPECT_EQ(refused.fd, -1);
  }
  ASSERT_EQ(sm_share_memory(row), SM_OK) << sm_last_error();
  EXPECT_EQ(is_shared(t), 1);
  EXPECT_EQ(is_shared(tt), 1);
  EXPECT_NE(data_ptr_of(t), old) << "the bytes moved";
  EXPECT_EQ(read<float>(tt), before) << "one copy, the same values";
  ASSERT_EQ(sm_memory_stats(cpu(), &st1), SM_OK);
  EXPECT_EQ(st1.allocated_bytes, st0.allocated_bytes - 6 * 8 * 4 - (512 - 6 * 8 * 4 % 512) % 512)
      << "the allocator's block went back";
  // Twice: PyTorch's no-op.
  const void* moved = data_ptr_of(t);
  ASSERT_EQ(sm_share_memory(tt), SM_OK);
  EXPECT_EQ(data_ptr_of(t), moved);
  // Writes through any view land in the shared pages another mapping sees.
  Exported e;
  export_tensor(t, &e);
  Storage imported;
  ASSERT_EQ(sm_storage_import(&e.desc, e.fd, imported.out()), SM_OK) << sm_last_error();
  ASSERT_EQ(sm_inplace_scalar(row, SM_OP_FILL, -1, 0), SM_OK);
  void* p = nullptr;
  ASSERT_EQ(sm_storage_data_ptr(imported, &p), SM_OK);
  const float* f = static_cast<const float*>(p);
  for (int i = 0; i < 48; ++i) EXPECT_EQ(f[i], i / 8 == 3 ? -1.0f : float(i)) << i;
}

TEST(Sharing, ShareMemoryRefusesWhatItCannotMoveAndChangesNothing) {
  // A stack tensor: the stack owns the buffer.
  Stack stk;
  ASSERT_EQ(sm_stack_create(cpu(), 4096, stk.out()), SM_OK);
  Tensor pushed;
  const int64_t s4[1] = {4};
  ASSERT_EQ(sm_stack_push(stk, s4, 1, SM_FLOAT32, pushed.out()), SM_OK);
  SM_EXPECT_STATUS(sm_share_memory(pushed), SM_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(sm_last_error()).find("sm_stack_create_shared"), std::string::npos);
  EXPECT_EQ(is_shared(pushed), 0);
  // Memory someone else owns.
  float blob[4] = {1, 2, 3, 4};
  Tensor wrapped;
  ASSERT_EQ(sm_from_blob(blob, s4, nullptr, 1, SM_FLOAT32, cpu(), nullptr, nullptr, wrapped.out()),
            SM_OK);
  SM_EXPECT_STATUS(sm_share_memory(wrapped), SM_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(sm_last_error()).find("sm_empty_shared"), std::string::npos);
  EXPECT_EQ(data_ptr_of(wrapped), static_cast<void*>(blob));
  // A live DLPack export pins the address.
  Tensor t = iota<float>({4});
  const void* old = data_ptr_of(t);
  void* managed = nullptr;
  ASSERT_EQ(sm_to_dlpack(t, 0, &managed), SM_OK);
  SM_EXPECT_STATUS(sm_share_memory(t), SM_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(sm_last_error()).find("DLPack"), std::string::npos);
  EXPECT_EQ(data_ptr_of(t), old);
  EXPECT_EQ(is_shared(t), 0);
  auto* m = static_cast<sm_DLManagedTensor*>(managed);
  m->deleter(m);
  SM_EXPECT_OK(sm_share_memory(t));
  EXPECT_EQ(is_shared(t), 1);
  EXPECT_EQ(read<float>(t), (std::vector<float>{0, 1, 2, 3}));
}

TEST(Sharing, ASharedStackIsExportedWhole) {
  Stack stk;
  ASSERT_EQ(sm_stack_create_shared(8192, stk.out()), SM_OK) << sm_last_error();
  Tensor a, b;
  const int64_t s10[1] = {10}, s23[2] = {2, 3};
  ASSERT_EQ(sm_stack_push(stk, s10, 1, SM_UINT8, a.out()), SM_OK);
  ASSERT_EQ(sm_stack_push(stk, s23, 2, SM_FLOAT64, b.out()), SM_OK);
  EXPECT_EQ(is_shared(b), 1);
  Storage whole;
  ASSERT_EQ(sm_stack_storage(stk, whole.out()), SM_OK) << sm_last_error();
  int64_t size = -1;
  ASSERT_EQ(sm_storage_size(whole, &size), SM_OK);
  EXPECT_EQ(size, 8192);
  Exported e;
  ASSERT_EQ(sm_storage_export(whole, &e.desc, &e.fd), SM_OK) << sm_last_error();
  Storage imported;
  ASSERT_EQ(sm_storage_import(&e.desc, e.fd, imported.out()), SM_OK) << sm_last_error();
  Tensor b2;
  const int64_t st[2] = {3, 1};
  ASSERT_EQ(sm_tensor_from_storage(imported, s23, st, 2, offset_of(b), SM_FLOAT64, b2.out()), SM_OK);
  ASSERT_EQ(sm_inplace_scalar(b2, SM_OP_FILL, 2.5, 0), SM_OK);
  EXPECT_EQ(read<double>(b), std::vector<double>(6, 2.5));
  // A pushed tensor exports the whole buffer directly (no storage handle
  // is handed out for stack tensors).
  Exported viat;
  ASSERT_EQ(sm_tensor_export(b, &viat.desc, &viat.fd), SM_OK) << sm_last_error();
  EXPECT_EQ(viat.desc.object_id, e.desc.object_id);
  EXPECT_EQ(viat.desc.nbytes, 8192);
  Storage refused_handle;
  SM_EXPECT_STATUS(sm_tensor_storage(b, refused_handle.out()), SM_ERR_UNSUPPORTED);
  // Stacks that are not shared do not export.
  Stack plain;
  ASSERT_EQ(sm_stack_create(cpu(), 1024, plain.out()), SM_OK);
  Storage ps;
  ASSERT_EQ(sm_stack_storage(plain, ps.out()), SM_OK);
  Exported refused;
  SM_EXPECT_STATUS(sm_storage_export(ps, &refused.desc, &refused.fd), SM_ERR_UNSUPPORTED);
}

TEST(Sharing, EmptyStoragesShareToo) {
  Tensor t;
  const int64_t shape[2] = {0, 3};
  ASSERT_EQ(sm_empty_shared(shape, 2, SM_FLOAT32, t.out()), SM_OK) << sm_last_error();
  Exported e;
  export_tensor(t, &e);
  EXPECT_EQ(e.desc.nbytes, 0);
  Storage imported;
  ASSERT_EQ(sm_storage_import(&e.desc, e.fd, imported.out()), SM_OK) << sm_last_error();
  Tensor v;
  ASSERT_EQ(sm_tensor_from_storage(imported, shape, nullptr, 2, 0, SM_FLOAT32, v.out()), SM_OK);
  EXPECT_EQ(numel_of(v), 0);
}

// ---- across processes ---------------------------------------------------------------------

TEST(Sharing, AChildWritesThroughAViewAndTheParentSeesIt) {
  Tensor t;
  const int64_t shape[2] = {5, 7};
  ASSERT_EQ(sm_empty_shared(shape, 2, SM_INT64, t.out()), SM_OK) << sm_last_error();
  ASSERT_EQ(sm_inplace_scalar(t, SM_OP_FILL, 3, 0), SM_OK);
  Exported e;
  export_tensor(t, &e);
  const int rc = with_child(
      [](int sock) {
        sm_share_desc d;
        int fd = -1;
        if (!recv_share(sock, &d, &fd)) return 2;
        sm_storage s = nullptr;
        if (sm_storage_import(&d, fd, &s) != SM_OK) return 3;
        close(fd);
        // Column 4 flipped: a view with a negative stride.
        const int64_t sh[1] = {5}, st[1] = {-7};
        sm_tensor col = nullptr;
        if (sm_tensor_from_storage(s, sh, st, 1, 4 * 7 + 4, SM_INT64, &col) != SM_OK) return 4;
        int64_t v[5];
        if (sm_copy_to_host(col, v, sizeof v) != SM_OK) return 5;
        for (int64_t x : v)
          if (x != 3) return 6;  // the parent's writes
        const int64_t values[5] = {10, 11, 12, 13, 14};
        sm_tensor src = nullptr;
        if (sm_from_host(values, sh, 1, SM_INT64, sm_device{SM_DEVICE_CPU, 0}, &src) != SM_OK) return 7;
        if (sm_copy_into(col, src) != SM_OK) return 8;
        sm_tensor_release(src);
        sm_tensor_release(col);
        sm_storage_release(s);
        return 0;
      },
      [&](int sock, pid_t) { ASSERT_TRUE(send_share(sock, e.desc, e.fd)); });
  ASSERT_EQ(rc, 0) << "the child failed at step " << rc;
  const std::vector<int64_t> all = read<int64_t>(t);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 7; ++c) EXPECT_EQ(all[r * 7 + c], c == 4 ? 14 - r : 3) << r << "," << c;
}

TEST(Sharing, MemoryOutlivesTheExporterUntilTheLastMapping) {
  sm_share_desc d{};
  int fd = -1;
  // The child creates, exports and exits: the parent's import keeps it.
  const int rc = with_child(
      [](int sock) {
        sm_tensor t = nullptr;
        const int64_t shape[1] = {1000};
        if (sm_arange(0, 1, 1000, SM_FLOAT32, sm_device{SM_DEVICE_CPU, 0}, &t) != SM_OK) return 2;
        if (sm_share_memory(t) != SM_OK) return 3;
        (void)shape;
        sm_storage s = nullptr;
        if (sm_tensor_storage(t, &s) != SM_OK) return 4;
        sm_share_desc out;
        int f = -1;
        if (sm_storage_export(s, &out, &f) != SM_OK) return 5;
        if (!send_share(sock, out, f)) return 6;
        char ack = 0;
        if (read(sock, &ack, 1) != 1) return 7;  // the parent has it
        return 0;                                 // exits without releasing anything
      },
      [&](int sock, pid_t) {
        ASSERT_TRUE(recv_share(sock, &d, &fd));
        ASSERT_GE(fd, 0);
        ASSERT_EQ(write(sock, "k", 1), 1);
      });
  ASSERT_EQ(rc, 0) << "child step " << rc;
  Storage s;
  ASSERT_EQ(sm_storage_import(&d, fd, s.out()), SM_OK) << sm_last_error();
  close(fd);
  Tensor v;
  const int64_t shape[1] = {1000};
  ASSERT_EQ(sm_tensor_from_storage(s, shape, nullptr, 1, 0, SM_FLOAT32, v.out()), SM_OK);
  const std::vector<float> got = read<float>(v);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(got[i], float(i));
}

TEST(Sharing, AChildKilledWhileSharingLeaksNothingInTheParent) {
  Tensor t;
  const int64_t shape[1] = {1 << 16};
  ASSERT_EQ(sm_empty_shared(shape, 1, SM_UINT8, t.out()), SM_OK);
  Exported e;
  export_tensor(t, &e);
  const Resources before;
  int64_t live_t = -1, live_s = -1, live_k = -1;
  ASSERT_EQ(sm_debug_live_handles(&live_t, &live_s, &live_k), SM_OK);
  const int rc = with_child(
      [](int sock) {
        sm_share_desc d;
        int fd = -1;
        if (!recv_share(sock, &d, &fd)) return 2;
        sm_storage s = nullptr;
        if (sm_storage_import(&d, fd, &s) != SM_OK) return 3;
        void* p = nullptr;
        sm_storage_data_ptr(s, &p);
        std::memset(p, 0x5A, 1 << 16);  // touches every page
        if (write(sock, "w", 1) != 1) return 4;
        for (;;) pause();  // holds the import until killed
      },
      [&](int sock, pid_t pid) {
        ASSERT_TRUE(send_share(sock, e.desc, e.fd));
        char w = 0;
        ASSERT_EQ(read(sock, &w, 1), 1);
        kill(pid, SIGKILL);
      });
  EXPECT_EQ(rc, -SIGKILL);
  const Resources after;
  EXPECT_EQ(after.fds, before.fds);
  EXPECT_EQ(after.maps, before.maps);
  int64_t t2 = -1, s2 = -1, k2 = -1;
  ASSERT_EQ(sm_debug_live_handles(&t2, &s2, &k2), SM_OK);
  EXPECT_EQ(t2, live_t);
  EXPECT_EQ(s2, live_s);
  // The parent's storage is intact and holds the child's writes.
  const std::vector<uint8_t> got = read<uint8_t>(t);
  EXPECT_EQ(got, std::vector<uint8_t>(1 << 16, 0x5A));
}

TEST(Sharing, ImportCopiesNoPageUntilTouched) {
  const int64_t mib = 64;
  Tensor t;
  const int64_t shape[1] = {mib << 20};
  ASSERT_EQ(sm_empty_shared(shape, 1, SM_UINT8, t.out()), SM_OK);
  ASSERT_EQ(sm_inplace_scalar(t, SM_OP_FILL, 1, 0), SM_OK);  // every page backed
  Exported e;
  export_tensor(t, &e);
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  const int rc = with_child(
      [&](int sock) {
        close(pipefd[0]);
        sm_share_desc d;
        int fd = -1;
        if (!recv_share(sock, &d, &fd)) return 2;
        const int64_t rss0 = sm_status_kb("VmRSS:");
        sm_storage s = nullptr;
        if (sm_storage_import(&d, fd, &s) != SM_OK) return 3;
        const int64_t rss1 = sm_status_kb("VmRSS:");
        void* p = nullptr;
        sm_storage_data_ptr(s, &p);
        const volatile uint8_t* b = static_cast<const uint8_t*>(p);
        uint64_t sum = 0;
        for (int64_t i = 0; i < (mib << 20); i += 4096) sum += b[i];
        const int64_t rss2 = sm_status_kb("VmRSS:");
        const int64_t figures[4] = {rss0, rss1, rss2, static_cast<int64_t>(sum)};
        if (write(pipefd[1], figures, sizeof figures) != sizeof figures) return 4;
        return 0;
      },
      [&](int sock, pid_t) { ASSERT_TRUE(send_share(sock, e.desc, e.fd)); });
  close(pipefd[1]);
  int64_t f[4] = {0, 0, 0, 0};
  ASSERT_EQ(read(pipefd[0], f, sizeof f), static_cast<ssize_t>(sizeof f));
  close(pipefd[0]);
  ASSERT_EQ(rc, 0);
  EXPECT_LT(f[1] - f[0], 2048) << "the import grew the child's resident memory by " << f[1] - f[0]
                               << " kB before any page was touched";
  EXPECT_GT(f[2] - f[1], (mib - 4) * 1024) << "reading maps the parent's pages in";
  EXPECT_EQ(f[3], (mib << 20) / 4096) << "the child read the parent's bytes";
}

TEST(Sharing, TenThousandCyclesLeakNoFdAndNoMapping) {
  Tensor t;
  const int64_t shape[1] = {4096};
  ASSERT_EQ(sm_empty_shared(shape, 1, SM_FLOAT32, t.out()), SM_OK);
  Storage s;
  ASSERT_EQ(sm_tensor_storage(t, s.out()), SM_OK);
  {  // warm-up: lazily created library state is not a leak
    Exported e;
    ASSERT_EQ(sm_storage_export(s, &e.desc, &e.fd), SM_OK);
    Storage i;
    ASSERT_EQ(sm_storage_import(&e.desc, e.fd, i.out()), SM_OK);
  }
  const Resources before;
  for (int k = 0; k < 10000; ++k) {
    sm_share_desc d;
    int fd = -1;
    ASSERT_EQ(sm_storage_export(s, &d, &fd), SM_OK) << sm_last_error();
    sm_storage i = nullptr;
    ASSERT_EQ(sm_storage_import(&d, fd, &i), SM_OK) << sm_last_error();
    close(fd);
    sm_tensor v = nullptr;
    ASSERT_EQ(sm_tensor_from_storage(i, shape, nullptr, 1, 0, SM_FLOAT32, &v), SM_OK);
    ASSERT_EQ(sm_tensor_release(v), SM_OK);
    ASSERT_EQ(sm_storage_release(i), SM_OK);
  }
  const Resources after;
  EXPECT_EQ(after.fds, before.fds);
  EXPECT_EQ(after.maps, before.maps);
}

// ---- a spawned program (tests/helpers/share_child.c), as a real worker ------------------

namespace {

std::string hex_of(const sm_share_desc& d) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&d);
  for (size_t i = 0; i < sizeof d; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

// Runs share_child on the descriptor (and fd, inherited) and returns its
// exit status (-signal when killed).
int run_share_child(const sm_share_desc& d, int fd, int64_t n) {
  // A duplicate without close-on-exec is what the child inherits.
  const int inherit = fd >= 0 ? dup(fd) : -1;
  const std::string h = hex_of(d), f = std::to_string(inherit), count = std::to_string(n);
  char* argv[] = {const_cast<char*>(SM_TEST_SHARE_CHILD), const_cast<char*>(h.c_str()),
                  const_cast<char*>(f.c_str()), const_cast<char*>(count.c_str()), nullptr};
  pid_t pid = -1;
  const int err = posix_spawn(&pid, SM_TEST_SHARE_CHILD, nullptr, nullptr, argv, environ);
  if (inherit >= 0) close(inherit);
  if (err != 0) {
    ADD_FAILURE() << "posix_spawn " << SM_TEST_SHARE_CHILD << ": " << std::strerror(err);
    return -1000;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

TEST(SharingProcesses, ASpawnedProgramImportsACpuStorage) {
  const int64_t n = 3000;
  Tensor t;
  ASSERT_EQ(sm_arange(0, 1, n, SM_FLOAT32, cpu(), t.out()), SM_OK);
  ASSERT_EQ(sm_share_memory(t), SM_OK) << sm_last_error();
  Exported e;
  export_tensor(t, &e);
  ASSERT_EQ(run_share_child(e.desc, e.fd, n), 0) << "share_child failed (its stderr says where)";
  const std::vector<float> got = read<float>(t);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 2.0f * float(i)) << i;
}

TEST(SharingCuda, TwoProcessesOneGpuThroughCudaIpc) {
  SMT_REQUIRE_CUDA();
  const int64_t n = 10000;
  // A block carved after another one: the storage starts inside its segment.
  Tensor pad, t;
  const int64_t s1[1] = {100};
  ASSERT_EQ(sm_empty(s1, 1, SM_FLOAT32, cuda(0), pad.out()), SM_OK) << sm_last_error();
  ASSERT_EQ(sm_arange(0, 1, n, SM_FLOAT32, cuda(0), t.out()), SM_OK) << sm_last_error();
  EXPECT_EQ(is_shared(t), 1) << "a caching-allocator block shares as it is";
  const void* before = data_ptr_of(t);
  ASSERT_EQ(sm_share_memory(t), SM_OK) << sm_last_error();
  EXPECT_EQ(data_ptr_of(t), before) << "a no-op on CUDA";
  Exported e;
  export_tensor(t, &e);
  EXPECT_EQ(e.fd, -1);
  EXPECT_EQ(e.desc.kind, SM_SHARE_CUDA_IPC);
  EXPECT_EQ(e.desc.device.type, SM_DEVICE_CUDA);
  EXPECT_EQ(e.desc.nbytes, n * 4);
  EXPECT_GT(e.desc.offset, 0) << "the block is not its segment's first";
  EXPECT_GE(e.desc.object_bytes, e.desc.offset + e.desc.nbytes);
  // The pad's export names the same segment (same handle), at another offset.
  Exported p;
  export_tensor(pad, &p);
  EXPECT_EQ(std::memcmp(p.desc.cuda_ipc_handle, e.desc.cuda_ipc_handle, 64), 0);
  EXPECT_NE(p.desc.offset, e.desc.offset);
  // This process cannot open its own handle.
  Storage self;
  SM_EXPECT_STATUS(sm_storage_import(&e.desc, -1, self.out()), SM_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(sm_last_error()).find("this process"), std::string::npos);
  // Another process maps it, checks it and doubles it in place.
  ASSERT_EQ(run_share_child(e.desc, -1, n), 0) << "share_child failed (its stderr says where)";
  const std::vector<float> got = read<float>(t);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 2.0f * float(i)) << i;
}

// ---- bad input: a clear status, nothing mapped, no fd kept -------------------------------

namespace {

struct BadImport {
  const char* what;
  sm_status expected;
  const char* needle;  // in the message
};

// Two shared CPU storages of nbytes, exported, and an fd number that was
// open a moment ago and is closed now: what the bad-fd cases pick from.
struct TwoExports {
  Tensor t, other;
  Exported e, o;
  int closed = -1;
  explicit TwoExports(int64_t nbytes) {
    const int64_t shape[1] = {nbytes};
    EXPECT_EQ(sm_empty_shared(shape, 1, SM_UINT8, t.out()), SM_OK) << sm_last_error();
    EXPECT_EQ(sm_empty_shared(shape, 1, SM_UINT8, other.out()), SM_OK) << sm_last_error();
    export_tensor(t, &e);
    export_tensor(other, &o);
    closed = dup(e.fd);
    EXPECT_GE(closed, 0);
    close(closed);
  }
};

void expect_refused(const sm_share_desc& d, int fd, const BadImport& b) {
  SCOPED_TRACE(b.what);
  const Resources before;
  sm_storage out = reinterpret_cast<sm_storage>(uintptr_t(0xDEADBEE0));
  const sm_status st = sm_storage_import(&d, fd, &out);
  const std::string msg = sm_last_error();
  EXPECT_EQ(st, b.expected) << status_name(st) << ": " << msg;
  EXPECT_EQ(out, reinterpret_cast<sm_storage>(uintptr_t(0xDEADBEE0))) << "out was written";
  EXPECT_NE(msg.find(b.needle), std::string::npos) << msg;
  const Resources after;
  EXPECT_EQ(after.fds, before.fds) << "an fd leaked";
  EXPECT_EQ(after.maps, before.maps) << "a mapping leaked";
}

}  // namespace

TEST(SharingBadInput, ForgedCorruptedAndForeignDescriptors) {
  Tensor t;
  const int64_t shape[1] = {1024};
  ASSERT_EQ(sm_empty_shared(shape, 1, SM_FLOAT32, t.out()), SM_OK);
  Exported e;
  export_tensor(t, &e);
  const sm_share_desc good = e.desc;
  sm_share_desc d;

  d = good;
  d.magic = 0x12345678;
  expect_refused(d, e.fd, {"wrong magic", SM_ERR_INVALID_ARGUMENT, "not a stridemem share descriptor"});
  std::vector<uint8_t> zeros(sizeof d, 0);
  std::memcpy(&d, zeros.data(), sizeof d);
  expect_refused(d, e.fd, {"all zeros", SM_ERR_INVALID_ARGUMENT, "magic"});
  // One byte flipped anywhere the checksum covers.
  for (size_t at : {size_t(16), size_t(30), size_t(50), size_t(80), size_t(135)}) {
    d = good;
    reinterpret_cast<uint8_t*>(&d)[at] ^= 0x01;
    expect_refused(d, e.fd, {"a flipped byte", SM_ERR_INVALID_ARGUMENT, "checksum"});
  }
  d = good;
  d.checksum ^= 1;
  expect_refused(d, e.fd, {"a flipped checksum", SM_ERR_INVALID_ARGUMENT, "checksum"});
  // Another library version's descriptors.
  d = good;
  d.format = SM_SHARE_FORMAT + 1;
  d.library_version = 10000 * (SM_VERSION_MAJOR + 1);
  reseal(&d);
  expect_refused(d, e.fd, {"a later format", SM_ERR_UNSUPPORTED, "format 2"});
  d = good;
  d.library_version = 10000 * (SM_VERSION_MAJOR + 1) + 203;
  reseal(&d);
  expect_refused(d, e.fd, {"another major version", SM_ERR_UNSUPPORTED, "another major version"});
  d = good;
  d.struct_size = 200;
  reseal(&d);
  expect_refused(d, e.fd, {"a wrong size", SM_ERR_INVALID_ARGUMENT, "200 bytes"});
  // Self-consistent lies.
  d = good;
  d.kind = 7;
  reseal(&d);
  expect_refused(d, e.fd, {"an unknown kind", SM_ERR_INVALID_ARGUMENT, "kind 7"});
  d = good;
  d.device = sm_device{SM_DEVICE_CUDA, 0};
  reseal(&d);
  expect_refused(d, e.fd, {"memfd on CUDA", SM_ERR_INVALID_ARGUMENT, "only be the CPU"});
  d = good;
  d.nbytes = d.object_bytes + 1;
  reseal(&d);
  expect_refused(d, e.fd, {"nbytes past the object", SM_ERR_OUT_OF_BOUNDS, "inside"});
  d = good;
  d.offset = INT64_MAX;
  reseal(&d);
  expect_refused(d, e.fd, {"an offset that overflows", SM_ERR_OUT_OF_BOUNDS, "inside"});
  d = good;
  d.nbytes = -4;
  reseal(&d);
  expect_refused(d, e.fd, {"negative nbytes", SM_ERR_OUT_OF_BOUNDS, "inside"});
  // Claims a bigger object than the fd really is.
  d = good;
  d.nbytes = d.object_bytes = good.object_bytes * 4;
  reseal(&d);
  expect_refused(d, e.fd, {"larger than the fd", SM_ERR_OUT_OF_BOUNDS, "past the end"});
  // The good one still works afterwards.
  Storage ok;
  SM_EXPECT_OK(sm_storage_import(&good, e.fd, ok.out()));
}

TEST(SharingBadInput, WrongClosedAndForeignFds) {
  TwoExports x(1024);
  const Exported& e = x.e;
  // Another storage's fd.
  expect_refused(e.desc, x.o.fd, {"another object's fd", SM_ERR_INVALID_ARGUMENT, "another shared object"});
  // A closed fd and nonsense numbers.
  const int closed = x.closed;
  expect_refused(e.desc, closed, {"a closed fd", SM_ERR_INVALID_ARGUMENT, "not an open file descriptor"});
  expect_refused(e.desc, -1, {"fd -1", SM_ERR_INVALID_ARGUMENT, "not a file descriptor"});
  expect_refused(e.desc, 1 << 28, {"a huge fd", SM_ERR_INVALID_ARGUMENT, "not an open file descriptor"});
  // A regular file of the right size.
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(ftruncate(fileno(f), 1024), 0);
  expect_refused(e.desc, fileno(f), {"a regular file", SM_ERR_INVALID_ARGUMENT, "a regular file"});
  std::fclose(f);
  // A pipe.
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  expect_refused(e.desc, p[0], {"a pipe", SM_ERR_INVALID_ARGUMENT, "a pipe"});
  close(p[0]);
  close(p[1]);
  // Shared memory that could shrink under the mapping (a memfd without seals).
  const int unsealed = memfd_create("not-stridemem", MFD_CLOEXEC);
  ASSERT_GE(unsealed, 0);
  ASSERT_EQ(ftruncate(unsealed, 1024), 0);
  expect_refused(e.desc, unsealed, {"an unsealed memfd", SM_ERR_INVALID_ARGUMENT, "F_SEAL_SHRINK"});
  close(unsealed);
  // NULL desc and out.
  Storage s;
  SM_EXPECT_STATUS(sm_storage_import(nullptr, e.fd, s.out()), SM_ERR_INVALID_ARGUMENT);
  SM_EXPECT_STATUS(sm_storage_import(&e.desc, e.fd, nullptr), SM_ERR_INVALID_ARGUMENT);
}

TEST(SharingBadInput, CudaDescriptorsForDevicesThatAreNotThere) {
  int32_t gpus = -1;
  ASSERT_EQ(sm_cuda_device_count(&gpus), SM_OK);
  sm_share_desc d;
  std::memset(&d, 0, sizeof d);
  d.magic = SM_SHARE_MAGIC;
  d.format = SM_SHARE_FORMAT;
  d.struct_size = SM_SHARE_DESC_SIZE;
  d.library_version = SM_VERSION_NUMBER;
  d.kind = SM_SHARE_CUDA_IPC;
  d.device = sm_device{SM_DEVICE_CUDA, 63};  // no machine here has 64 GPUs
  d.nbytes = 4096;
  d.object_bytes = 2 << 20;
  reseal(&d);
  expect_refused(d, -1, {"a GPU that is not there", SM_ERR_DEVICE, "cuda"});
  expect_refused(d, 0, {"a CUDA handle with an fd", SM_ERR_INVALID_ARGUMENT, "fd must be -1"});
  if (gpus == 0) {  // a CPU-only build or machine: every CUDA descriptor
    d.device = sm_device{SM_DEVICE_CUDA, 0};
    reseal(&d);
    expect_refused(d, -1, {"a CUDA handle without a GPU", SM_ERR_DEVICE, "cuda"});
  }
}

// Mutation fuzzing of the import, in ctest (so under ASan+UBSan and valgrind
// in the reliability suite): random bytes of a good descriptor changed,
// resealed or not, with the right fd, another object's, a closed one or -1.
// Every call either fails with one of the documented statuses or gives a
// storage inside the real object; nothing is left mapped or open.
TEST(SharingBadInput, MutatedDescriptorsFailCleanlyOrStayInBounds) {
  TwoExports x(3000);
  const Exported &e = x.e, &o = x.o;
  const int closed = x.closed;
  const Resources before;
  uint64_t rng = 0x9E3779B97F4A7C15ull;
  auto next = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  int accepted = 0;
  for (int k = 0; k < 10000; ++k) {
    sm_share_desc d = e.desc;
    uint8_t* b = reinterpret_cast<uint8_t*>(&d);
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int f = 0; f < flips; ++f) {
      const uint64_t r = next();
      // Mostly the fields the checks read; sometimes any byte.
      const size_t at = r % 4 ? static_cast<size_t>(r % 72) : static_cast<size_t>(r % sizeof d);
      b[at] = static_cast<uint8_t>(r >> 32);
    }
    if (next() % 2) reseal(&d);
    const uint64_t pick = next() % 8;
    const int fd = pick < 5 ? e.fd : pick == 5 ? o.fd : pick == 6 ? closed : -1;
    sm_storage s = nullptr;
    const sm_status st = sm_storage_import(&d, fd, &s);
    if (st == SM_OK) {
      ++accepted;
      int64_t size = -1;
      ASSERT_EQ(sm_storage_size(s, &size), SM_OK);
      EXPECT_EQ(size, d.nbytes);
      EXPECT_LE(d.offset + d.nbytes, 3000) << "an accepted import reaches past the object";
      EXPECT_EQ(fd, e.fd) << "accepted with the wrong fd";
      ASSERT_EQ(sm_storage_release(s), SM_OK);
    } else {
      EXPECT_TRUE(st == SM_ERR_INVALID_ARGUMENT || st == SM_ERR_UNSUPPORTED ||
                  st == SM_ERR_OUT_OF_BOUNDS || st == SM_ERR_DEVICE)
          << "mutation " << k << ": " << status_name(st) << ": " << sm_last_error();
      EXPECT_EQ(s, nullptr);
      EXPECT_STRNE(sm_last_error(), "");
    }
  }
  const Resources after;
  EXPECT_EQ(after.fds, before.fds);
  EXPECT_EQ(after.maps, before.maps);
  EXPECT_GT(accepted, 0) << "some mutations are harmless (pid, minor version, ranges inside)";
}
