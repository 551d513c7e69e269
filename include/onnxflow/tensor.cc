#include "include/onnxflow/tensor.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include <oneapi/tbb/spin_mutex.h>

#include "include/onnxflow/storage_arena.h"

namespace onnxflow {

const char* DataTypeName(DataType dtype) {
  switch (dtype) {
    case DataType::kUndefined: return "undefined";
    case DataType::kFloat: return "float32";
    case DataType::kUint8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUint16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kDouble: return "float64";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kFloat8E4M3FN: return "float8e4m3fn";
    case DataType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DataType::kFloat8E5M2: return "float8e5m2";
    case DataType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DataType::kUint4: return "uint4";
    case DataType::kInt4: return "int4";
    case DataType::kFloat4E2M1: return "float4e2m1";
    case DataType::kFloat8E8M0: return "float8e8m0";
    case DataType::kUint2: return "uint2";
    case DataType::kInt2: return "int2";
  }
  return "unknown";
}

bool IsValidDataType(int32_t value) { return value > 0 && value <= kMaxDataType; }

size_t ElementSize(DataType dtype) {
  switch (dtype) {
    case DataType::kUndefined: return 0;
    case DataType::kFloat: case DataType::kInt32: case DataType::kUint32: return 4;
    case DataType::kDouble: case DataType::kInt64: case DataType::kUint64: return 8;
    case DataType::kComplex64: return 8;
    case DataType::kComplex128: return 16;
    case DataType::kInt16: case DataType::kUint16: case DataType::kFloat16:
    case DataType::kBFloat16: return 2;
    case DataType::kString: return sizeof(std::string);
    default: return 1;  // bool, 8-bit and (unpacked) sub-byte types
  }
}

bool IsFloatingPoint(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: case DataType::kDouble: case DataType::kFloat16:
    case DataType::kBFloat16: case DataType::kFloat8E4M3FN: case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2: case DataType::kFloat8E5M2FNUZ: case DataType::kFloat8E8M0:
    case DataType::kFloat4E2M1: return true;
    default: return false;
  }
}

bool IsSignedInteger(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8: case DataType::kInt16: case DataType::kInt32: case DataType::kInt64:
    case DataType::kInt4: case DataType::kInt2: return true;
    default: return false;
  }
}

bool IsUnsignedInteger(DataType dtype) {
  switch (dtype) {
    case DataType::kUint8: case DataType::kUint16: case DataType::kUint32: case DataType::kUint64:
    case DataType::kUint4: case DataType::kUint2: return true;
    default: return false;
  }
}

int64_t ElementCount(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {

// 64-byte alignment: one cache line, and a full AVX-512 vector.
constexpr size_t kAlignment = 64;

// Tensor storage of 256 KiB to 256 MiB comes from the process's arena (storage_arena.h): its free
// space is split and merged, so a run holds what its live tensors need. The size classes below
// kept a high-water mark per class: YOLOv8n at 640 x 640 held 45.6 MB of buffers for live tensors
// of at most 19.2 MB (the arena: 24 MB). Storage past 256 MiB is a mapping of its own, unmapped
// when freed; smaller than 256 KiB (kArenaMinBytes), it comes from the size classes.
constexpr size_t kMappedBytes = kArenaMaxBytes;
constexpr size_t kPage = 4096;

size_t RoundUpTo(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }
bool Mapped(size_t bytes) { return kMapBigBuffers && bytes >= kMappedBytes; }

// `bytes` (a multiple of `align`, a power of two up to 2 MiB) aligned to `align`, or null.
// `huge_pages` asks the kernel for transparent huge pages.
void* AllocateAligned(size_t bytes, size_t align, bool huge_pages) {
  void* p = nullptr;
  if (!Mapped(bytes)) {
    p = std::aligned_alloc(align, bytes);
  } else {
    const size_t size = RoundUpTo(bytes, kPage);
    const size_t extra = align > kPage ? align : 0;  // mmap aligns to pages: trim a larger alignment
    void* region = mmap(nullptr, size + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) return nullptr;
    const uintptr_t start = reinterpret_cast<uintptr_t>(region);
    const uintptr_t aligned = RoundUpTo(start, extra == 0 ? kPage : align);
    if (aligned > start) munmap(region, aligned - start);
    const uintptr_t end = start + size + extra;
    if (end > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
    p = reinterpret_cast<void*>(aligned);
  }
  if (p != nullptr && huge_pages) madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

// `bytes` as given to AllocateAligned.
void FreeAligned(void* p, size_t bytes) {
  if (Mapped(bytes)) {
    munmap(p, RoundUpTo(bytes, kPage));
  } else {
    std::free(p);
  }
}

// Storage under 256 KiB (and all of it under AddressSanitizer) comes from size classes that are
// recycled: a run's intermediate buffers go back to the pool when their last reader is done and
// the next run (or the next node) takes them again, hot in cache, instead of malloc and free (a
// graph of tiny nodes otherwise spends a fifth of its time there). Classes are four per power of
// two, so a buffer wastes at most a fifth of its size; a request whose class is empty takes a
// freed buffer of up to four classes above (at most twice its size). Buffers above 256 MiB are not
// kept, and the pool holds at most 1 GiB.
class BufferPool {
 public:
  static BufferPool& Global() {
    static BufferPool* pool = new BufferPool();  // never destroyed: tensors may outlive main()
    return *pool;
  }

  // Returns a buffer of at least `bytes` and its class size (the size to give back).
  void* Take(size_t bytes, size_t* class_bytes) {
    // Under kMinPooled, the smallest class: a buffer is taken from the class it is given back to
    // (a shape or a scalar, 24 bytes, went back as 64 and was never taken again, so a transformer
    // export's Shape/Gather/Concat plumbing grew the pool by 19 KB a run, up to its 1 GB bound).
    const int c = ClassOf(std::max(bytes, kMinPooled));
    *class_bytes = c < 0 ? RoundUp(bytes) : ClassSize(c);
    for (int k = c; c >= 0 && k < kClasses && k <= c + kSpillClasses; ++k) {
      tbb::spin_mutex::scoped_lock lock(mutexes_[k]);
      if (!free_[k].empty()) {
        void* p = free_[k].back();
        free_[k].pop_back();
        *class_bytes = ClassSize(k);
        retained_.fetch_sub(*class_bytes, std::memory_order_relaxed);
        return p;
      }
    }
    // Big tensors on 2 MiB pages (transparent huge pages, which the kernel gives a region that asks
    // for them): streamed over 4 KiB pages, every page is a TLB miss, which in a virtual machine is
    // a walk of two page tables. ISNet at 1024 x 1024 (tensors of 16-134 MB) ran at 1.5 s in some
    // processes and 2.9-3.4 s in others, on the same code: its copies (Concat, Add) at 1-2 GB/s.
    // From 8 MiB only: 2 MiB-aligned starts put every tensor's lines in the same cache sets, and
    // ResNet-50's 3 MB activations on them ran 1-3% slower at two threads (not significant in
    // repeated rounds, but nothing to gain there: its pages stay mapped run after run).
    const bool huge = *class_bytes >= kMinHugePaged;
    return AllocateAligned(AllocatedBytes(*class_bytes), huge ? kHugePage : kAlignment, huge);
  }

  // Frees every kept buffer (outside the lock: a thread taking a buffer spins while it is held).
  void Release() {
    for (int c = 0; c < kClasses; ++c) {
      std::vector<void*> kept;
      {
        tbb::spin_mutex::scoped_lock lock(mutexes_[c]);
        kept.swap(free_[c]);
      }
      for (void* p : kept) {
        FreeAligned(p, AllocatedBytes(ClassSize(c)));
        retained_.fetch_sub(ClassSize(c), std::memory_order_relaxed);
      }
    }
  }

  size_t retained() const { return retained_.load(std::memory_order_relaxed); }

  void Give(void* p, size_t class_bytes) {
    const int c = ClassOf(class_bytes);
    if (c >= 0 && ClassSize(c) == class_bytes &&
        retained_.fetch_add(class_bytes, std::memory_order_relaxed) + class_bytes <= kMaxRetained) {
      tbb::spin_mutex::scoped_lock lock(mutexes_[c]);
      free_[c].push_back(p);
      return;
    }
    if (c >= 0 && ClassSize(c) == class_bytes) retained_.fetch_sub(class_bytes, std::memory_order_relaxed);
    FreeAligned(p, AllocatedBytes(class_bytes));
  }

 private:
  static constexpr size_t kMinPooled = kAlignment;
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kMinHugePaged = size_t{8} << 20;
  static constexpr size_t kMaxPooled = size_t{256} << 20;
  static constexpr size_t kMaxRetained = size_t{1} << 30;
  static constexpr int kClasses = 4 * 64;
  static constexpr int kSpillClasses = 4;

  // What a buffer of a class (or of a size no class holds) takes from the system: a multiple of the
  // alignment, the huge-paged ones whole 2 MiB pages.
  static size_t AllocatedBytes(size_t class_bytes) {
    return class_bytes < kMinHugePaged ? RoundUp(class_bytes) : (class_bytes + kHugePage - 1) / kHugePage * kHugePage;
  }
  static size_t RoundUp(size_t bytes) {
    const size_t r = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    return r == 0 ? kAlignment : r;
  }
  // Class c covers sizes up to ClassSize(c): (4 + c % 4) * 2^(c / 4) / 4.
  static size_t ClassSize(int c) { return (size_t{4} + c % 4) << (c / 4) >> 2; }
  static int ClassOf(size_t bytes) {
    if (bytes < kMinPooled || bytes > kMaxPooled) return -1;
    const int log = 63 - __builtin_clzll(bytes);
    int c = 4 * log;
    while (ClassSize(c) < bytes) ++c;
    return c;
  }

  // Spin locks: a class's critical section is a push or a pop, and the kernels that split over
  // cores take and give buffers of the same classes at once. With std::mutex the loser slept in
  // the kernel (a futex wait and wake, dear in a virtual machine): a grouped convolution taking a
  // buffer per group (RegNet's 56 groups of 8 on 7 x 7) ran 1.5x slower on two cores than on one,
  // a third of its time in lock and unlock.
  tbb::spin_mutex mutexes_[kClasses];
  std::vector<void*> free_[kClasses];
  std::atomic<size_t> retained_{0};
};

std::shared_ptr<void> AllocateStorage(DataType dtype, int64_t count, bool zero) {
  if (dtype == DataType::kString) {
    return std::shared_ptr<void>(new std::string[count > 0 ? count : 1],
                                 [](void* p) { delete[] static_cast<std::string*>(p); });
  }
  const size_t bytes = static_cast<size_t>(count) * ElementSize(dtype);
  StorageArena* arena = ArenaFor(bytes);
  size_t class_bytes = 0;
  void* p = arena != nullptr ? arena->Take(bytes) : BufferPool::Global().Take(bytes, &class_bytes);
  if (p == nullptr) throw std::bad_alloc();
  if (zero) std::memset(p, 0, bytes);
  if (arena != nullptr) return std::shared_ptr<void>(p, [arena](void* q) { arena->Give(q); });
  return std::shared_ptr<void>(p, [class_bytes](void* q) { BufferPool::Global().Give(q, class_bytes); });
}

}  // namespace

void ReleasePooledStorage() {
  BufferPool::Global().Release();
  if (StorageArena* arena = ProcessArena()) arena->Release();
}

size_t PooledStorageBytes() {
  const StorageArena* arena = ProcessArena();
  return BufferPool::Global().retained() + (arena != nullptr ? arena->retained() : 0);
}

Tensor::Tensor(DataType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  storage_ = AllocateStorage(dtype_, size(), /*zero=*/true);
  data_ = storage_.get();
}

Tensor Tensor::Uninitialized(DataType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.storage_ = AllocateStorage(dtype, t.size(), /*zero=*/false);
  t.data_ = t.storage_.get();
  return t;
}

Tensor Tensor::Borrow(DataType dtype, Shape shape, void* data) {
  return Tensor(dtype, std::move(shape), nullptr, data);
}

Tensor Tensor::Clone() const {
  if (!defined()) return Tensor();
  Tensor t = Uninitialized(dtype_, shape_);
  if (dtype_ == DataType::kString) {
    const std::string* src = data<std::string>();
    std::string* dst = t.mutable_data<std::string>();
    for (int64_t i = 0; i < size(); ++i) dst[i] = src[i];
  } else if (nbytes() > 0) {
    std::memcpy(t.data_, data_, nbytes());
  }
  return t;
}

}  // namespace onnxflow
