// What every tfpartial kernel shares: the bitwise choice that keeps a
// frozen element, how a kernel reads its variables and its frozen mask, and
// when an update is worth splitting across threads.
//
// Included by each kernel's header, all of them by kernels.cc (one translation unit: TensorFlow's headers
// take most of a build's time).

#ifndef TFPARTIAL_KERNELS_COMMON_H_
#define TFPARTIAL_KERNELS_COMMON_H_

#define EIGEN_USE_THREADS

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/kernels/training_op_helpers.h"
#include "tensorflow/core/util/work_sharder.h"

namespace tfpartial {

using ::tensorflow::DEVICE_CPU;
using ::tensorflow::OpKernel;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShapeUtils;
using CPUDevice = Eigen::ThreadPoolDevice;

template <typename T> struct Bits;
template <> struct Bits<float> { using Type = uint32_t; };
template <> struct Bits<double> { using Type = uint64_t; };

// `keep` is all ones (frozen) or all zeros; a bitwise choice compiles to
// vector blends, where a branch would stop the loop from vectorizing.
template <typename T>
inline T Choose(typename Bits<T>::Type keep, T kept, T updated) {
  typename Bits<T>::Type a, b;
  std::memcpy(&a, &kept, sizeof(T));
  std::memcpy(&b, &updated, sizeof(T));
  const typename Bits<T>::Type r = (a & keep) | (b & ~keep);
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

// All ones where `frozen` (a bool's byte, 0 or 1), else all zeros.
template <typename T>
inline typename Bits<T>::Type Keep(uint8_t frozen) {
  using U = typename Bits<T>::Type;
  return U(0) - static_cast<U>(frozen);
}

// An update smaller than this many elements runs on the calling thread:
// handing part of it to another thread costs more than it saves (measured
// for every kernel, see docs/measurements.md: the many small variables
// of a deep model run their updates side by side on TensorFlow's inter-op
// threads already). Larger ones are split by TensorFlow's Shard.
#ifndef TFPARTIAL_INLINE_ELEMENTS  // Defined only to measure others.
#define TFPARTIAL_INLINE_ELEMENTS (int64_t{1} << 16)
#endif
constexpr int64_t kInlineElements = TFPARTIAL_INLINE_ELEMENTS;

// work(begin, end) over [0, total) units of `unit_elements` elements each,
// split across the device's threads when the update is large.
template <typename Work>
void ParallelFor(OpKernelContext* ctx, int64_t total, int64_t unit_elements,
                 int64_t cost_per_element, const Work& work) {
  if (total <= 0) return;
  if (total * unit_elements < kInlineElements) {
    work(int64_t{0}, total);
    return;
  }
  auto* workers = ctx->device()->tensorflow_cpu_worker_threads()->workers;
  ::tensorflow::Shard(workers->NumThreads(), workers, total,
                      cost_per_element * unit_elements,
                      [&work](int64_t begin, int64_t end) {
                        work(begin, end);
                      });
}

// The variables at `inputs` (resource handles or TF1 refs) as tensors to
// update in place: call with their locks held (`Lock`).
template <typename T>
::tensorflow::Status GetVariables(OpKernelContext* ctx, bool locked,
                                  const std::vector<int>& inputs,
                                  std::vector<Tensor>* out) {
  for (int input : inputs) {
    Tensor tensor;
    TF_RETURN_IF_ERROR(
        ::tensorflow::GetInputTensorFromVariable<CPUDevice, T>(
            ctx, input, locked, /*sparse=*/false, &tensor));
    if (!tensor.IsInitialized()) {
      return ::tensorflow::errors::FailedPrecondition(
          "Attempting to use uninitialized variables: ",
          ctx->op_kernel().requested_input(input));
    }
    out->push_back(tensor);
  }
  return ::tensorflow::OkStatus();
}

template <typename T>
::tensorflow::VariableInputLockHolder Lock(OpKernelContext* ctx, bool locked,
                                           const std::vector<int>& inputs) {
  return ::tensorflow::MaybeLockVariableInputMutexesInOrder<CPUDevice, T>(
      ctx, locked, /*sparse=*/false, inputs);
}

// InvalidArgument unless every tensor has `shape`.
inline ::tensorflow::Status CheckSameShape(
    const ::tensorflow::TensorShape& shape, std::initializer_list<Tensor> all,
    const char* names) {
  for (const Tensor& tensor : all) {
    if (!shape.IsSameSize(tensor.shape())) {
      return ::tensorflow::errors::InvalidArgument(
          names, " must have one shape: ", shape.DebugString(), " and ",
          tensor.shape().DebugString());
    }
  }
  return ::tensorflow::OkStatus();
}

// InvalidArgument unless the inputs [first, end) are scalars.
inline ::tensorflow::Status CheckScalars(OpKernelContext* ctx, int first,
                                         int end) {
  for (int i = first; i < end; ++i) {
    if (!TensorShapeUtils::IsScalar(ctx->input(i).shape())) {
      return ::tensorflow::errors::InvalidArgument(
          "input ", i, " must be a scalar: ",
          ctx->input(i).shape().DebugString());
    }
  }
  return ::tensorflow::OkStatus();
}

// A frozen mask as the kernels read it: one byte (a bool) per element, or
// one per row (the first axis) of a variable of `size` elements; or, as a
// uint8 tensor, one bit per element, packed eight to a byte from the least
// significant bit (NumPy's `packbits(..., bitorder="little")`): what a TF1
// graph holds for a large mask, an eighth of its bytes.
struct Frozen {
  const uint8_t* data;
  bool per_element, packed;
  int64_t size, rows, row_size;
};

inline ::tensorflow::Status ReadFrozen(const Tensor& frozen,
                                       const ::tensorflow::TensorShape& shape,
                                       Frozen* out) {
  out->size = shape.num_elements();
  out->rows = shape.dims() > 0 ? shape.dim_size(0) : 1;
  out->row_size = out->rows > 0 ? out->size / out->rows : 0;
  out->packed = frozen.dtype() == ::tensorflow::DT_UINT8;
  if (out->packed) {
    if (frozen.dims() != 1 || frozen.NumElements() != (out->size + 7) / 8) {
      return ::tensorflow::errors::InvalidArgument(
          "a packed frozen mask must hold one bit per element of ",
          shape.DebugString(), " (", (out->size + 7) / 8, " bytes); got ",
          frozen.shape().DebugString());
    }
    out->per_element = true;
    out->data = frozen.flat<uint8_t>().data();
    return ::tensorflow::OkStatus();
  }
  if (frozen.dtype() != ::tensorflow::DT_BOOL) {
    return ::tensorflow::errors::InvalidArgument(
        "frozen must be a bool mask or a packed (uint8) one");
  }
  out->per_element = frozen.NumElements() == out->size;
  if (!out->per_element && frozen.NumElements() != out->rows) {
    return ::tensorflow::errors::InvalidArgument(
        "frozen must hold one bool per element or per row of ",
        shape.DebugString(), "; got ", frozen.shape().DebugString());
  }
  out->data = reinterpret_cast<const uint8_t*>(frozen.flat<bool>().data());
  return ::tensorflow::OkStatus();
}

// The eight bits of `bits` as eight bytes of 0 or 1, bit i in byte i (in
// memory order, on a little-endian machine): each byte of the product
// holds the byte; the mask keeps bit i in byte i; adding 0x7F carries a
// set bit into the byte's top bit.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "packed masks are unpacked for little-endian machines");
inline uint64_t Unpack8(uint8_t bits) {
  const uint64_t spread =
      (bits * uint64_t{0x0101010101010101}) & uint64_t{0x8040201008040201};
  return ((spread + uint64_t{0x7F7F7F7F7F7F7F7F}) >> 7) &
         uint64_t{0x0101010101010101};
}

// update(begin, end, frozen, row_keep) over every element: `frozen` is one
// byte per element of [begin, end) (`frozen[i - begin]` for element i), or
// null when `row_keep` (`Keep` of the row's bool) holds for the whole span,
// which is then one row. A packed mask is unpacked a few thousand elements
// at a time into such bytes.
template <typename T, typename Update>
void ForEachSpan(OpKernelContext* ctx, const Frozen& frozen,
                 int64_t cost_per_element, const Update& update) {
  using U = typename Bits<T>::Type;
  if (frozen.packed) {
    constexpr int64_t kChunkBytes = 512;
    const int64_t size = frozen.size;
    ParallelFor(ctx, (size + 7) / 8, 8, cost_per_element + 1,
                [&](int64_t begin, int64_t end) {
                  uint8_t bytes[kChunkBytes * 8];
                  for (int64_t b = begin; b < end; b += kChunkBytes) {
                    const int64_t first = b * 8;
                    const int64_t last =
                        std::min(std::min(end, b + kChunkBytes) * 8, size);
                    for (int64_t k = 0; k < (last - first + 7) / 8; ++k) {
                      const uint64_t lanes = Unpack8(frozen.data[b + k]);
                      std::memcpy(bytes + 8 * k, &lanes, 8);
                    }
                    update(first, last, bytes, U(0));
                  }
                });
    return;
  }
  if (frozen.per_element) {
    ParallelFor(ctx, frozen.size, 1, cost_per_element,
                [&](int64_t begin, int64_t end) {
                  update(begin, end, frozen.data + begin, U(0));
                });
    return;
  }
  const int64_t row_size = frozen.row_size;
  ParallelFor(ctx, frozen.rows, row_size, cost_per_element,
              [&](int64_t begin, int64_t end) {
                for (int64_t row = begin; row < end; ++row) {
                  update(row * row_size, (row + 1) * row_size, nullptr,
                         Keep<T>(frozen.data[row]));
                }
              });
}

// InvalidArgument unless `offsets` (int32) rise strictly and lie in
// [0, size): each names one element, at most once.
inline ::tensorflow::Status CheckOffsets(const Tensor& offsets, int64_t size) {
  if (offsets.dims() != 1) {
    return ::tensorflow::errors::InvalidArgument(
        "trainable must be a vector of element offsets; got ",
        offsets.shape().DebugString());
  }
  const auto flat = offsets.flat<int32_t>();
  int64_t previous = -1;
  for (int64_t i = 0; i < flat.size(); ++i) {
    if (flat(i) <= previous || flat(i) >= size) {
      return ::tensorflow::errors::InvalidArgument(
          "trainable must hold offsets rising strictly in [0, ", size,
          "); at ", i, ": ", flat(i));
    }
    previous = flat(i);
  }
  return ::tensorflow::OkStatus();
}

// What an op on a TF1 ref variable returns: the variable.
inline void ForwardRef(OpKernelContext* ctx) {
  // MaybeForwardRefInputToRefOutput, which not every release exports.
  if (::tensorflow::IsRefType(ctx->input_dtype(0))) {
    ctx->forward_ref_input_to_ref_output(0, 0);
  }
}

}  // namespace tfpartial

// The two forms of a v1 op: `Ref(T)` variables with the variable as output,
// or `resource` handles with no output.
#define TFPARTIAL_REF_OUTPUT                                         \
  Output("out: Ref(T)")                                              \
      .SetShapeFn([](::tensorflow::shape_inference::InferenceContext* c) { \
        c->set_output(0, c->input(0));                               \
        return ::tensorflow::OkStatus();                             \
      })
#define TFPARTIAL_NO_OUTPUT \
  SetShapeFn(::tensorflow::shape_inference::NoOutputs)

#endif  // TFPARTIAL_KERNELS_COMMON_H_
