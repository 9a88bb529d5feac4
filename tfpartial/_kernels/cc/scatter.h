// Writing a compact variable back: its values into the trainable elements
// of the variable it trains, by their flat offsets, in place.
//
// TensorFlow's ResourceScatterNdUpdate does this element by element through
// a general slice copy, and leaves the variable in its sparse-access mode,
// where every later read copies the whole variable (docs/performance.md,
// "Sparse fine-tuning", has both measured). This op writes each value with
// one store and leaves the variable's mode as it is.

#ifndef TFPARTIAL_KERNELS_SCATTER_H_
#define TFPARTIAL_KERNELS_SCATTER_H_

#include "common.h"
#include "tensorflow/core/framework/resource_mgr.h"
#include "tensorflow/core/framework/resource_var.h"

namespace tfpartial {
namespace {

template <typename T>
class ScatterOffsetsOp : public OpKernel {
 public:
  explicit ScatterOffsetsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& offsets = ctx->input(1);
    const Tensor& values = ctx->input(2);
    {
      // Before the variable is read as a tensor of T: reading one of
      // another dtype (and copying it, when a read holds its buffer) would
      // stop the process, not fail the op. A variable's dtype is fixed.
      ::tensorflow::core::RefCountPtr<::tensorflow::Var> variable;
      OP_REQUIRES_OK(ctx, ::tensorflow::LookupResource(
                              ctx, ::tensorflow::HandleFromInput(ctx, 0),
                              &variable));
      OP_REQUIRES(ctx,
                  variable->tensor()->dtype() ==
                      ::tensorflow::DataTypeToEnum<T>::v(),
                  ::tensorflow::errors::InvalidArgument(
                      "the variable's dtype is not the values' dtype"));
    }
    auto locks = Lock<T>(ctx, /*locked=*/true, {0});
    std::vector<Tensor> vars;
    OP_REQUIRES_OK(ctx, GetVariables<T>(ctx, /*locked=*/true, {0}, &vars));
    Tensor& var = vars[0];
    OP_REQUIRES_OK(ctx, CheckOffsets(offsets, var.NumElements()));
    OP_REQUIRES(ctx,
                values.dims() == 1 &&
                    values.NumElements() == offsets.NumElements(),
                ::tensorflow::errors::InvalidArgument(
                    "values must be a vector of one value per offset; got ",
                    values.shape().DebugString(), " for ",
                    offsets.NumElements(), " offsets"));
    T* __restrict out = var.flat<T>().data();
    const int32_t* __restrict at = offsets.flat<int32_t>().data();
    const T* __restrict in = values.flat<T>().data();
    ParallelFor(ctx, offsets.NumElements(), 1, /*cost_per_element=*/4,
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i) out[at[i]] = in[i];
                });
  }
};

}  // namespace
}  // namespace tfpartial

REGISTER_OP("TfpartialResourceScatterOffsets")
    .Input("var: resource")
    .Input("offsets: int32")
    .Input("values: T")
    .Attr("T: {float, double}")
    .TFPARTIAL_NO_OUTPUT;

#define TFPARTIAL_REGISTER_SCATTER(T)                                     \
  REGISTER_KERNEL_BUILDER(Name("TfpartialResourceScatterOffsets")         \
                              .Device(::tensorflow::DEVICE_CPU)           \
                              .HostMemory("var")                          \
                              .TypeConstraint<T>("T"),                    \
                          ::tfpartial::ScatterOffsetsOp<T>)
TFPARTIAL_REGISTER_SCATTER(float);
TFPARTIAL_REGISTER_SCATTER(double);

#endif  // TFPARTIAL_KERNELS_SCATTER_H_
