#include "server/batcher.h"

#include <algorithm>
#include <cstring>

namespace onnxflow::server {

using Clock = std::chrono::steady_clock;

Status Batcher::CheckBatchable(const Session& session) {
  for (const auto* list : {&session.inputs(), &session.outputs()}) {
    for (const ValueInfo& info : *list) {
      if (info.kind != Value::Kind::kTensor || !info.has_shape || info.shape.empty() || info.shape[0] >= 0) {
        return InvalidArgument("dynamic batching needs a dynamic first dimension on every input and output; '" +
                               info.name + "' has none");
      }
    }
  }
  return Status::Ok();
}

Batcher::Batcher(std::shared_ptr<const Session> session, BatchingConfig config, ModelMetrics* metrics)
    : state_(std::make_shared<State>()) {
  state_->session = std::move(session);
  state_->config = config;
  state_->metrics = metrics;
  thread_ = std::thread([state = state_] { Loop(*state); });
}

Batcher::~Batcher() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stop = true;
  }
  state_->wake.notify_all();
  // The last reference to a model can go in a callback the batching thread makes; it then ends
  // on its own (it holds the state), since it cannot join itself.
  if (thread_.get_id() == std::this_thread::get_id()) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

void Batcher::Submit(std::vector<NamedValue> inputs, RunOptions options, Session::RunCallback done) {
  Item item;
  std::sort(inputs.begin(), inputs.end(), [](const NamedValue& a, const NamedValue& b) { return a.name < b.name; });
  item.rows = -1;
  for (const NamedValue& in : inputs) {
    const int64_t rows = in.value.is_tensor() && in.value.tensor().rank() >= 1 ? in.value.tensor().dim(0) : -1;
    if (rows < 0 || (item.rows >= 0 && rows != item.rows)) {
      item.rows = -1;
      break;
    }
    item.rows = rows;
  }
  item.inputs = std::move(inputs);
  item.options = options;
  item.done = std::move(done);
  item.arrived = Clock::now();
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->queued_rows += std::max<int64_t>(item.rows, 1);
    state_->queue.push_back(std::move(item));
  }
  state_->wake.notify_one();
}

bool Batcher::Compatible(const Item& a, const Item& b) {
  if (a.rows < 0 || b.rows < 0 || a.inputs.size() != b.inputs.size()) return false;
  if (a.options.cancel != nullptr || b.options.cancel != nullptr || a.options.profile || b.options.profile) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const Tensor& x = a.inputs[i].value.tensor();
    const Tensor& y = b.inputs[i].value.tensor();
    if (a.inputs[i].name != b.inputs[i].name || x.dtype() != y.dtype() || x.rank() != y.rank()) return false;
    if (!std::equal(x.shape().begin() + 1, x.shape().end(), y.shape().begin() + 1)) return false;
  }
  return true;
}

void Batcher::Loop(State& s) {
  std::unique_lock<std::mutex> lock(s.mutex);
  while (true) {
    s.wake.wait(lock, [&] { return s.stop || !s.queue.empty(); });
    if (s.queue.empty()) return;  // stopping, nothing left
    const auto flush_at = s.queue.front().arrived + s.config.max_delay;
    s.wake.wait_until(lock, flush_at, [&] { return s.stop || s.queued_rows >= s.config.max_batch_size; });
    std::vector<Item> batch;
    int64_t rows = 0;
    const auto now = Clock::now();
    while (!s.queue.empty()) {
      Item& next = s.queue.front();
      if (!batch.empty() && (!Compatible(batch.front(), next) || rows + next.rows > s.config.max_batch_size)) break;
      s.queued_rows -= std::max<int64_t>(next.rows, 1);
      if (next.options.deadline <= now) {
        // Expired while waiting for company: answer it now instead of spending a run on it.
        auto done = std::move(next.done);
        s.queue.pop_front();
        lock.unlock();
        done(Status(StatusCode::kDeadlineExceeded, "the request's deadline passed while it waited to be batched"));
        lock.lock();
        continue;
      }
      rows += std::max<int64_t>(next.rows, 0);
      batch.push_back(std::move(next));
      s.queue.pop_front();
      if (batch.front().rows < 0) break;  // a request that cannot be merged runs alone
    }
    if (batch.empty()) continue;
    lock.unlock();
    Dispatch(s, std::move(batch));
    lock.lock();
  }
}

void Batcher::Dispatch(State& s, std::vector<Item> batch) {
  s.metrics->batch_size.Observe(static_cast<double>(batch.size()));
  if (batch.size() == 1) {
    s.session->RunAsync(std::move(batch[0].inputs), batch[0].options, std::move(batch[0].done));
    return;
  }
  int64_t total = 0;
  RunOptions options;
  options.deadline = Clock::time_point::min();
  for (const Item& item : batch) {
    total += item.rows;
    options.deadline = std::max(options.deadline, item.options.deadline);  // the run serves the most patient
  }
  std::vector<NamedValue> merged;
  for (size_t i = 0; i < batch[0].inputs.size(); ++i) {
    const Tensor& first = batch[0].inputs[i].value.tensor();
    Shape shape = first.shape();
    shape[0] = total;
    Tensor out = Tensor::Uninitialized(first.dtype(), shape);
    if (first.dtype() == DataType::kString) {
      std::string* dst = out.mutable_data<std::string>();
      for (const Item& item : batch) {
        const Tensor& t = item.inputs[i].value.tensor();
        dst = std::copy(t.data<std::string>(), t.data<std::string>() + t.size(), dst);
      }
    } else {
      char* dst = static_cast<char*>(out.mutable_raw_data());
      for (const Item& item : batch) {
        const Tensor& t = item.inputs[i].value.tensor();
        if (t.nbytes()) std::memcpy(dst, t.raw_data(), t.nbytes());
        dst += t.nbytes();
      }
    }
    merged.push_back({batch[0].inputs[i].name, std::move(out)});
  }
  auto items = std::make_shared<std::vector<Item>>(std::move(batch));
  s.session->RunAsync(std::move(merged), options, [items, total](Result<std::vector<NamedValue>> result) {
    if (!result.ok()) {
      for (Item& item : *items) item.done(result.status());
      return;
    }
    for (const NamedValue& out : *result) {
      if (!out.value.is_tensor() || out.value.tensor().rank() < 1 || out.value.tensor().dim(0) != total) {
        const Status error = FailedPrecondition("output '" + out.name + "' of a batched run does not have " +
                                                std::to_string(total) + " rows to split between the requests");
        for (Item& item : *items) item.done(error);
        return;
      }
    }
    int64_t begin = 0;
    const auto now = Clock::now();
    for (Item& item : *items) {
      if (item.options.deadline < now) {
        item.done(Status(StatusCode::kDeadlineExceeded, "the request's deadline passed during its batched run"));
      } else {
        std::vector<NamedValue> mine;
        for (const NamedValue& out : *result) mine.push_back({out.name, out.value.tensor().SliceAxis0(begin, begin + item.rows)});
        item.done(std::move(mine));
      }
      begin += item.rows;
    }
  });
}

}  // namespace onnxflow::server
