"""Answers written to probe the concept grader on the built-in deck, each with the rating it
suggests: confidently wrong answers in the deck's own vocabulary suggested Again, right
answers in other words suggested Good, terse ones read as claims rather than as lists."""

from collections import Counter

import pytest

from drill.bank.loader import load_default_bank
from drill.kinds import make_instance
from drill.kinds.grade import grade

PROBES = [
    # wrong, in the right words
    ("define-ttft", "TTFT is the average time between generated tokens, determined by the "
     "decode step.", 1),
    ("define-tpot", "TPOT is the total request time divided by the number of generated tokens, "
     "and it depends only on the model size.", 1),
    ("define-tpot", "TPOT is how long the prefill takes per prompt token; it depends on the "
     "prompt length.", 1),
    ("continuous-batching-iteration-level", "Continuous batching keeps one fixed batch running "
     "and pads every sequence to the same length, so the GPU never stops.", 1),
    ("prefill-compute-decode-bandwidth", "Prefill is memory-bound because it has to write the "
     "whole KV cache, and decode is compute-bound because it runs the full model for every "
     "token.", 1),
    ("define-ttft", "TTFT is set by the model's decode speed and network latency; queueing "
     "doesn't count since the request hasn't started yet.", 1),
    ("define-tpot", "TPOT depends only on the prompt length: a longer prompt means each output "
     "token takes longer, whatever else is running.", 1),
    ("prefill-compute-decode-bandwidth", "Prefill is compute-bound because attention is "
     "quadratic in the prompt, and decode is memory-bound because the KV cache doesn't fit in "
     "the GPU and has to come from CPU memory.", 1),
    ("gqa-cache-change", "GQA compresses the keys and values with a learned projection, like "
     "MLA, so every head still has its own K and V but smaller; it's a runtime flag.", 1),
    ("decode-idle-gpu-saturated", "No. If the tensor cores are idle, the GPU is underused; the "
     "bottleneck is the CPU launching kernels, and a faster GPU with more FLOPs would fix "
     "it.", 1),
    ("littles-law-sizing", "Little's law: concurrency equals latency divided by arrival rate, so "
     "with higher traffic you need fewer slots.", 1),
    ("continuous-batching-iteration-level", "Continuous batching means the server never idles: "
     "it starts a new batch as soon as the previous batch has fully finished.", 1),
    ("define-tps", "Tokens per second is the same for the user and the system, because all "
     "users in a batch see the same speed; a bigger batch raises it for everyone.", 1),
    ("chunked-prefill-purpose", "Chunked prefill splits the KV cache into chunks so more "
     "requests fit in memory; it costs nothing for the long prompt.", 1),
    ("prefix-cache-hit-metrics", "A prefix cache hit improves end-to-end latency by making "
     "every decode step skip the shared tokens.", 1),
    ("kv-cache-vs-recompute", "With a KV cache the model stores the output logits of earlier "
     "steps, so step t skips attention entirely; without it, it recomputes only the last "
     "token.", 1),
    ("spec-decoding-mechanism", "The target model runs k times in parallel on different GPUs to "
     "produce k tokens at once, and the draft picks the best one.", 1),
    ("vtc-fairness",
     "VTC counts the number of requests each tenant sends and serves the tenant with"
     " the most requests first, since busy tenants deserve more service.", 1),
    ("kv-offload-tiers",
     "Lower tiers are faster because they are larger; fetching from SSD is always "
     "better than recomputing, whatever the sizes.", 1),
    ("single-request-capacity-test",
     "A single request is a fine test because KV memory does not depend on how many "
     "requests run; latency per request is all that matters.", 1),
    ("moe-eplb-how",
     "EPLB changes the router so tokens are assigned evenly to experts, which "
     "changes the model's outputs slightly but costs no memory.", 1),
    ("tp-across-nodes",
     "Tensor parallelism needs no communication between GPUs, so it could go across "
     "nodes; pipeline parallelism is kept inside a node because it sends the whole "
     "weights.", 1),
    ("mla-what-it-caches",
     "MLA caches the full K and V for every head, just in lower precision; it costs "
     "nothing in compute.", 1),
    ("kv-int4-scales",
     "INT4 needs no scales because 4 bits are enough for the value range; larger "
     "groups are always more accurate.", 1),
    ("block-size-tradeoff",
     "Bigger blocks always waste less memory and make prefix caching more precise, "
     "so there is no trade-off.", 1),
    ("disagg-why-and-cost",
     "Prefill and decode are split so each GPU runs both phases faster; it costs "
     "nothing since no data moves between them.", 1),
    ("split-phases-not-one-number",
     "TTFT is bound by memory bandwidth and TPOT by compute, so one end-to-end "
     "figure captures both well enough.", 1),
    ("eagle-feature-drafting",
     "EAGLE drafts from the target's output tokens using a separate large model that"
     " is fine-tuned together with the target.", 1),
    ("wq-awq-vs-gptq",
     "AWQ retrains the model with backpropagation to recover accuracy, and GPTQ "
     "rounds all weights to nearest at once.", 1),
    # right, in other words
    ("decode-idle-gpu-saturated", "Yes. Decode is limited by memory bandwidth: each step streams "
     "the weights and all the KV caches from HBM, and that is what is maxed out. The SMs sit "
     "stalled waiting for data, so low tensor-core utilization is expected. A GPU with more "
     "FLOPs wouldn't help; more bandwidth, smaller KV or a bigger batch would.", 3),
    ("cuda-graphs-why-decode", "In small-batch decode each kernel is tiny and finishes faster "
     "than the CPU can launch the next one, so the GPU sits idle between launches. Capturing "
     "the step as a graph records the whole sequence of kernels once and replays it with a "
     "single launch, so they run back to back. A long prefill's kernels already run long "
     "enough for async launches to hide the CPU overhead, and its shapes change from prompt "
     "to prompt.", 3),
    ("define-ttft", "It's the latency from when the client sends the request to when the first "
     "generated token comes back. It's made of the wait in the scheduler queue plus the "
     "prefill over the prompt, minus whatever a prefix cache hit lets you skip.", 3),
    ("define-tpot", "The time between two consecutive output tokens once streaming has started; "
     "it equals the duration of one decode iteration of the current batch, so more or longer "
     "sequences in the batch make it larger.", 3),
    ("define-tps", "It can mean how fast one user's stream arrives, roughly one over TPOT, or the "
     "total tokens the server generates across every request. Growing the batch raises the "
     "total and slows each user, so a number without saying which is meaningless.", 3),
    ("batching-amortizes-weights", "In decode the step is dominated by reading the weights from "
     "HBM, and that read is shared by every sequence in the batch, so adding sequences barely "
     "lengthens the step and throughput goes up almost linearly. It stops at the compute "
     "ridge, when the per-sequence KV reads dominate, or when the KV cache runs out of "
     "memory.", 3),
    ("attention-sinks-streaming", "The first few tokens soak up a lot of attention regardless of "
     "content, because softmax needs somewhere to put probability mass; a sliding window "
     "that evicts them makes the model fall apart. StreamingLLM keeps about four of those "
     "initial tokens plus a rolling window of recent ones, so the cache is fixed size. It "
     "does not give a longer memory: anything that slid out of the window is gone.", 3),
    # terse: short parts with no sentence are a list the user rates, even where one denies
    # something (the reader cannot tell which term a "won't" belongs to)
    ("decode-idle-gpu-saturated", "Yes: memory-bound, HBM bandwidth saturated, cores stall on "
     "loads; more FLOPs won't help.", None),
    # right answers that name a wrong version in passing, or a contrast, and wrong ones a
    # cue without its subject used to credit: no wrong claim is read into the right ones
    # (each had been suggested Again or Hard), and no wrong one is suggested Good
    ("define-tpot", "The time between two consecutive output tokens; it is one decode step, so "
     "it depends on whatever else is running in the batch.", 3),
    ("define-ttft", "Time from sending the request until the first output token arrives: "
     "queueing plus prefill. End-to-end latency depends on the output length, TTFT does not.",
     3),
    ("decode-idle-gpu-saturated", "Compute is underused, but the SMs stall waiting on memory: "
     "decode is memory-bound and HBM bandwidth is saturated, so more FLOPs would not help.", 3),
    ("mla-what-it-caches", "MHA caches K and V for every head; MLA caches one compressed latent "
     "per token and up-projects it, so the cache is much smaller.", None),
    ("tp-across-nodes", "Tensor parallelism needs an all-reduce in every layer, unlike data "
     "parallelism, which needs no communication between GPUs in the forward pass, so across "
     "nodes the slow network dominates.", 2),
    ("contiguous-reservation-waste", "Contiguous allocation reserves the max length per request "
     "and wastes memory to fragmentation; paged blocks are slightly slower to access but "
     "waste almost nothing.", 3),
    ("goodput-definition", "Goodput is the number of useful requests per second that meet "
     "both SLOs", None),
    ("attention-sinks-streaming", "The first tokens get lots of attention not because of "
     "important content but because softmax must sum to one.", None),
    ("define-tpot", "TPOT is the time per output token after the first; it is not total request "
     "time divided by tokens, which would include the first token.", 2),
    ("define-tpot", "TPOT is the time between two requests arriving at the server; it grows "
     "with the batch size", 1),
    ("goodput-definition", "as throughput increases, goodput always increases too, so capacity "
     "is the peak rate", 1),
    # the same claims worded with "it", or around a comma, are still read; the right ones
    # with other pairings still credited
    ("define-tpot", "TPOT is the time between two tokens; it stays constant whatever else is "
     "running.", 1),
    ("define-tpot", "TPOT is the time per output token; it is the same whatever else is "
     "running.", 1),
    ("define-tpot", "TPOT is the average time per token, including the first token; it depends "
     "on the batch.", 1),
    ("define-tpot", "TPOT is the time between two successive tokens; it grows with the batch "
     "size.", 3),
    ("define-tpot", "The time between two decode outputs, i.e. one decode step of the whole "
     "running batch.", 3),
    ("define-ttft", "TTFT is the time until the first token arrives. It depends on the output "
     "length.", 1),
    ("mla-what-it-caches", "It caches the K and V for every head, just compressed to lower "
     "precision.", 1),
    ("tp-across-nodes", "It needs no communication between GPUs, so nodes are fine.", 1),
    ("decode-idle-gpu-saturated", "No. Idle tensor cores mean the hardware is underused, so "
     "there is headroom for more work.", 1),
    ("goodput-definition", "Goodput is useful output tokens per second. Raw throughput keeps "
     "rising with a bigger batch while requests miss; capacity is the max rate at which 90 % "
     "of requests meet the targets.", None),
    # cues tuned against a set of candidate answers: wrong claims now read (answers
    # swapping the two metrics, padding as continuous batching, Little's law turned
    # around), half answers no longer complete (a technique's gain without what it
    # leaves unsolved, a method named without how it works), and right answers in
    # other words (a mistake named in a list of mistakes, 'hit every SLO')
    ("ttft-tpot-streaming", "TTFT is how fast the words keep coming once the reply has started, "
     "and TPOT is how long you wait before anything shows up.", 1),
    ("kv-layout-shape", "Each layer stores a single tensor shaped [batch, seq_len, hidden_size] "
     "with K and V concatenated, and the head axis always uses the query heads.", 1),
    ("gqa-cache-change", "GQA lets consecutive tokens share one K and V entry, so the cache "
     "shrinks along the sequence axis.", 1),
    ("continuous-batching-iteration-level", "It pads all requests to the same length so the "
     "kernels never need to change shape.", 1),
    ("littles-law-sizing", "Little's law: throughput is concurrency times latency, and it only "
     "applies if arrivals are Poisson.", 1),
    ("percentiles-not-means", "Percentiles are additive, so you can add the p99 of TTFT and the "
     "p99 of decode to get the end-to-end p99.", 1),
    ("spec-decoding-mechanism", "The draft writes most of the tokens and the target only runs "
     "every k steps; the output is unchanged because the draft is distilled from the target.", 1),
    ("vtc-fairness", "VTC works like a rate limiter: each tenant gets a fixed token quota per "
     "minute.", 1),
    ("wq-activations-harder", "Activations are harder because they are larger tensors than the "
     "weights; SmoothQuant runs a low pass filter over the weights.", 1),
    ("wq-awq-vs-gptq", "AWQ finds the salient channels from the activation magnitudes and scales "
     "them up; GPTQ uses a calibration set to keep the error low.", 2),
    ("vtc-fairness", "Count tokens, because requests differ in cost; VTC keeps a counter per "
     "tenant and serves the one with the smallest counter next.", 2),
    ("kv-cache-vs-recompute", "With a cache the step reuses the stored keys and values and "
     "computes them only for the new token; without one it just recomputes.", 2),
    ("what-helps-which-phase", "Chunked prefill lowers ITL for everyone else, FP8 KV and GQA let "
     "more sequences fit, prefix caching cuts TTFT and speculative decoding cuts TPOT.", None),
    ("percentiles-not-means", "Latency is skewed, so the mean hides the tail; report p50 for the "
     "typical request and p99 for the slow ones. Mistakes: summing percentiles across phases, "
     "quoting a p99 from too few samples, and leaving out the load it was measured at.", 3),
    ("goodput-definition", "Goodput counts only the requests that hit every latency SLO. Raw "
     "throughput keeps rising while more requests miss their targets, so capacity is the "
     "highest request rate at which 90 % still meet them.", 3),
    ("moe-decode-batch-regimes", "At batch 1 a step reads about the 13B active parameters; at "
     "batch 256 nearly every expert is picked, so it reads close to 47B; memory must hold all "
     "47B whatever the batch.", 3),
    # wrong claims read on the second round of candidate answers, with right answers beside them
    ("batching-amortizes-weights", "Batching works because each sequence is mapped to its own "
     "SM, one sequence per SM, so the batch is free until it has more sequences than SMs.", 1),
    ("define-tps", "Tokens per second is the prefill speed of the server, and you quote it with "
     "the dtype.", 1),
    ("prefix-cache-hit-metrics", "A hit lowers none of the latencies: hashing the blocks costs as "
     "much as the skipped prefill saves.", 1),
    ("slo-conflict-batching", "A bigger batch may run out of memory, but latency per user "
     "improves with batching because the GPU is busier.", 1),
    ("define-ttft", "TTFT is the time to tokenize the input and ship it; the prefill happens in "
     "the background while the first tokens stream.", 1),
    ("define-ttft", "From sending the request until the first token comes back: time waiting in "
     "the queue plus the prefill of whatever part of the prompt the prefix cache did not "
     "hold.", 3),
    ("latency-anti-patterns", "Typical mistakes: batching at all, since every request should "
     "run alone; ignoring that the KV cache is small compared to the weights anyway.", 1),
    ("latency-anti-patterns", "Mistakes: tuning only for aggregate tokens per second, which grows "
     "the batch until the TTFT SLO breaks; recomputing the whole prefix with no KV cache; sizing "
     "the cache without the dtype or KV heads; and hoping speculative decoding will save a cold "
     "prompt's prefill.", 3),
    ("speculative-vs-prefill", "Yes, the draft model prefills the prompt first and hands its KV "
     "cache to the target, so the target skips most of its prefill.", 1),
    ("split-phases-not-one-number", "Prefill and decode always run on different GPUs, so "
     "different teams own them; that is why the SLO is split.", 1),
    ("what-helps-which-phase", "Combined, they leave nothing unsolved: all target the same thing, "
     "decode throughput.", 1),
    ("prefill-compute-decode-bandwidth", "Prefill is compute-bound because of the softmax over the "
     "vocabulary at every position; decode is memory-bound because tokens are copied back to CPU "
     "memory after every step.", 1),
    ("kv-cache-vs-recompute", "Without a cache step t still only processes the new token, "
     "because causal attention never changes earlier tokens; decode costs the same either "
     "way.", 1),
    ("kv-layout-shape", "Per layer the cache is [batch, seq_len, vocab_size]: it stores the "
     "logits of each position.", 1),
    ("fp16-vs-fp8-kv", "Always FP8: zero accuracy loss, since it has the same dynamic range as "
     "FP16, and twice the sequences fit.", 1),
    ("fp16-vs-fp8-kv", "FP8 takes one byte per element where FP16 takes two, so the cache halves "
     "and about twice the sequences fit; check the quality on your evals, and spell out the "
     "dtype in any cache size you quote.", 3),
    ("contiguous-reservation-waste", "It barely wastes anything: the reserved but untouched tail "
     "is never physically backed, so only the live tokens cost memory.", 1),
    ("contiguous-reservation-waste", "Each slot is padded to a power of two, and FP8 removes that "
     "waste.", 1),
    ("fragmentation-without-paging", "The waste is padding tokens in the batch and the weights "
     "stored once per request; the fix is continuous batching.", 1),
    ("waste-fraction-invariant", "Nothing changes because the reservation is made in GiB, not in "
     "tokens: the same number of bytes is reserved and wasted.", 1),
    ("waste-fraction-invariant", "Reserved and live bytes are both tokens times bytes per token; "
     "the heads and dtype sit in that factor, which cancels, so the empty share stays 1 - "
     "live/reserved, while the wasted bytes still drop 8x.", 3),
    ("littles-law-sizing", "Little's law, L = λW: 30 requests/s staying 4 s each means 120 in "
     "the system. Count the KV pool from admission, since queued requests hold no cache. "
     "Backwards, a concurrency cap of 64 divided by a 2 s latency caps throughput at 32 "
     "requests/s, whatever the arrival pattern.", 3),
    ("littles-law-sizing", "Little's law tells you latency grows exponentially once utilization "
     "passes 50 %.", 1),
    ("goodput-definition", "Goodput is the useful tokens per second: throughput minus the tokens "
     "wasted on padding.", 1),
    ("percentiles-not-means", "We report p99 because the mean is always higher than the p99, and "
     "p99 makes the numbers look better.", 1),
    ("ttft-tpot-itl-e2e", "TTFT, TPOT, ITL and E2E are all the same latency measured at different "
     "points, so E2E = TTFT + TPOT + ITL.", 1),
    ("kv-int4-scales", "INT4 stores 16 levels, so each group keeps a scale, maybe a zero point; "
     "those constants cost extra bits, the kernel must dequantize, and quality needs checking. "
     "Put differently, a scale per 32 values is 4.5 bits.", 2),
    ("kv-int4-scales", "The scales cost nothing in memory, and the grouping is chosen to match "
     "the warp size, for speed, not for accuracy.", 1),
    ("mla-tensor-parallel", "Because MLA's 128 heads do not map evenly onto 8 GPUs; with TP 16 "
     "instead it would divide.", 1),
    ("mla-what-it-caches", "MLA caches only the attention output of each layer and rebuilds K and "
     "V from it.", 1),
    ("paged-attention-block-table", "PagedAttention keeps the KV cache in CPU memory pages and "
     "swaps pages into the GPU when attention needs them; the only waste is PCIe bandwidth.", 1),
    ("paged-attention-block-table", "Fixed-size blocks (16 tokens in vLLM) are handed out as a "
     "sequence grows and freed at its end; a block table maps each sequence's logical blocks to "
     "physical ones anywhere in the pool. Only the last block of each sequence is partly empty. "
     "Refcounts let sequences share prefix blocks, at the price of an indirection in the "
     "kernel.", 3),
    ("block-size-tradeoff", "Go as large as possible: bigger blocks waste less, since there are "
     "fewer of them, and the only cost is slower allocation.", 1),
    ("chunked-prefill-budget-tradeoff", "Lower N means shorter steps, so decoding requests see "
     "smaller, steadier gaps between tokens.", 2),
    ("chunked-prefill-budget-tradeoff", "A smaller budget keeps steps short, so decoding users get "
     "steady token gaps, but a long prompt needs more steps to prefill and its TTFT goes up; a "
     "bigger budget does the reverse. Pick it from the ITL target and the prompt mix.", 3),
    ("chunked-prefill-budget-tradeoff", "The budget only affects throughput, not latency; latency "
     "per token is the same either way.", 1),
    ("continuous-batching-iteration-level", "Each request gets its own CUDA stream, so the GPU "
     "runs many batches of size 1 in parallel.", 1),
    ("preemption-swap-or-recompute", "Nothing is preempted: the engine drops the oldest tokens "
     "from every sequence, a sliding window, so no request ever stops.", 1),
    ("tp-kv-split-limit", "Tensor parallelism hands each GPU its own KV heads, so the cache per "
     "GPU is the total divided by the number of GPUs.", 2),
    ("decode-idle-gpu-saturated", "Yes: matrix-vector products run on the regular CUDA cores in "
     "FP32, and those are saturated, which is why the tensor cores look idle.", 1),
    ("ridge-point-meaning", "The ridge point is the batch size where the GPU runs out of memory "
     "for the KV cache.", 1),
    ("ridge-point-meaning", "Peak FLOP/s over memory bandwidth, about 300 FLOP/B on an H100; below "
     "it a kernel is memory-bound, above it compute-bound. Decode is memory-bound.", 2),
    ("ridge-point-meaning", "Peak FLOP/s over memory bandwidth, about 300 FLOP/B on an H100; below "
     "it memory-bound, above it compute-bound. Decode does about 2 FLOPs per weight per sequence, "
     "so about the batch size in FLOP/B: far below 300 at small batch.", 3),
    ("cost-input-vs-output-price", "Output costs more because of the sampling step: the vocabulary "
     "projection is most of the cost, and input tokens skip the LM head.", 1),
    ("cost-input-vs-output-price", "Prefill runs the prompt in one parallel pass, so input is "
     "cheap; output comes one token at a time, so it takes more GPU time.", 2),
    ("tp-kv-split-limit", "TP splits the cache along the sequence dimension: each GPU keeps a "
     "contiguous range of tokens, so the division never stops.", 1),
    ("lora-merge-vs-separate", "Merge for every tenant: merging all tenants' adapters into one "
     "set of weights lets one model serve them all.", 1),
    ("lora-merge-vs-separate", "Merge when one deployment serves one fine-tune: no overhead at "
     "all. With many tenants a merged copy serves only its own adapter, so you would need a full "
     "copy per adapter.", 2),
    ("cp-ring-attention", "Ring attention gives each GPU a subset of heads for the whole prompt "
     "and a ring all-reduce sums the outputs; basically tensor parallelism.", 1),
    ("tp-across-nodes", "TP across nodes is fine, since the communication is tiny; keeping it in "
     "a node is only about the weights sharing the same physical memory.", 1),
    ("eagle-feature-drafting", "EAGLE drafts from the input prompt using n-gram lookup, so there "
     "is no model at all.", 1),
    ("tree-cost-large-batch", "The tree still pays off at any batch size, since the accepted "
     "length grows linearly with the branches.", 1),
    ("spec-decoding-mechanism", "The draft proposes k tokens, the target scores them in one pass, "
     "and each draft is kept with probability min(1, q/p).", 1),
    ("spec-gain-large-batch", "Speculation works equally well at any batch size as long as the "
     "draft runs on the GPU.", 1),
    ("cuda-graph-capture-breakers", "Shapes are fixed, so each batch size gets its own graph; no "
     ".item() or other host syncs, since Python logic only runs at capture; and the memory "
     "addresses are fixed, so inputs are copied into static buffers before each replay.", 3),
    ("flash-attention-io-aware", "It is faster because it runs on FP8 tensor cores instead of "
     "FP16; IO-aware means it looks at the input and output token counts.", 1),
    ("flash-decoding-why", "FlashDecoding splits the keys and values along the sequence and "
     "simply averages the partial outputs.", 1),
    ("attention-sinks-streaming", "StreamingLLM inserts special summary tokens periodically, each "
     "compressing the tokens that leave the window, so the model can still answer questions "
     "about anything it read.", 1),
    ("h2o-eviction-lossy", "H2O keeps the recent tokens and the heavy hitters, those with the most "
     "accumulated attention, within a fixed budget; it is lossy because it is throwing tokens "
     "away.", 2),
    ("h2o-eviction-lossy", "H2O keeps the most frequent words, by token frequency, and it is not "
     "really lossy since the model can reconstruct dropped tokens.", 1),
    ("prefix-routing-vs-load", "Prefix routing lets the replica skip decoding the repeated part of "
     "the answer; the risk is that caches get corrupted when two requests overwrite each other's "
     "KV blocks.", 1),
    ("admission-kv-reservation", "Reserving up front is the efficient option, since the engine can "
     "batch more requests, while admitting on current need fragments the pool.", 1),
    ("moe-eplb-how", "EPLB adds an auxiliary loss to the router at serving time that "
     "penalizes popular experts.", 1),
    ("encoder-disaggregation", "The encoder is memory-bandwidth bound, and what moves between the "
     "workers is the raw image pixels.", 1),
    ("constrained-decoding-tokenizer", "Generate freely, validate the output with a JSON parser and "
     "resample until it passes; tokenizer boundaries don't matter.", 1),
    ("constrained-decoding-tokenizer", "Compile the schema into an automaton, and each step mask "
     "every token that would break it by setting its logit to minus infinity. Tokens span "
     "several characters or stop mid-symbol, so each token's whole string is run through the "
     "automaton; doing that for the whole vocabulary is costly, so engines precompute token sets "
     "per state, and nested JSON needs a stack.", 3),
    ("temperature-zero-nondeterminism", "On a busy engine another user's tokens leak into your "
     "attention, so isolating the cache per request fixes it.", 1),
    ("bug-review-capacity-note", "The per-token number is right; the bug is that the 140 GB of "
     "weights must be held on every GPU.", 1),
    ("moe-routing-imbalance", "The router is random, so collisions make it uneven; and under "
     "expert parallelism it does not hurt latency, since each GPU finishes independently.", 1),
    ("moe-routing-imbalance", "Experts specialise: code or one language keeps hitting the same "
     "experts, and the balancing loss only evens this out on average over big training batches. "
     "Under expert parallelism the all-to-all waits for the busiest GPU, so the step time "
     "follows the maximum load.", 3),
    ("temperature-zero-nondeterminism", "Temperature 0 is really a very small temperature, so a "
     "tiny amount of random sampling remains; a fixed seed makes it fully reproducible.", 1),
    ("fragmentation-without-paging", "The waste is padding the prompt to a power of two and "
     "keeping the query tensor in the cache; the fix is FlashAttention.", 1),
    ("admission-kv-reservation", "Reserving the maximum is strictly better: reserved blocks cost "
     "no real memory until they are written.", 1),
    # half answers whose points are said in plain words are Hard, not left to the user
    ("h2o-eviction-lossy", "It keeps the heavy hitters, the tokens with the most accumulated "
     "attention, plus the recent ones, within a fixed budget; it is lossy because evicted tokens "
     "are removed from the cache.", 2),
    ("prefix-routing-vs-load", "A cache hit avoids redoing the prefill, so the first token comes "
     "faster; routed by prefix alone, a hot prefix overloads its replica while others idle.", 2),
    ("percentiles-not-means", "Latency is skewed: the mean hides the tail, so p50 is the typical "
     "request and p99 the slow ones. A common mistake is quoting a p99 without enough "
     "samples.", 2),
    ("spec-gain-large-batch", "At large batch the step is already compute-bound, so verifying the "
     "drafts is no longer free and every rejected draft wastes compute.", 2),
    ("lora-merge-vs-separate", "Merge for a single fine-tune, since it adds no overhead; a "
     "multi-tenant server keeps adapters separate because a merged model only serves one "
     "adapter.", 2),
    # right answers using words that a looser wrong-claim cue would have taken for the claim
    ("slo-conflict-batching", "System throughput improves with batching because every weight "
     "read is shared, but each step gets longer, so every user's TPOT gets worse; TTFT suffers "
     "too when a long prefill stalls the iteration, which chunked prefill, batch caps or "
     "disaggregation address.", 3),
    ("constrained-decoding-tokenizer", "Putting the schema in the system prompt isn't enough. The "
     "engine compiles the schema into an automaton and masks every token that would break it, "
     "setting its logit to minus infinity. A token can span several grammar symbols or stop "
     "mid-symbol, so its whole string is walked through the automaton; checking the whole "
     "vocabulary each step is costly, so engines precompute per-state token sets, and nested "
     "JSON needs a stack.", 3),
    ("tp-kv-split-limit", "Each GPU keeps the K and V of its own KV heads, so the cache per GPU is "
     "the total divided by TP, up to the KV-head count; past it heads are replicated and the "
     "share stops shrinking. With MLA every GPU keeps the full cache, since its latent is read "
     "by every head, so plan capacity per GPU.", 3),
    ("ridge-point-meaning", "The ridge is a property of the GPU, regardless of the batch size: "
     "peak FLOP/s over bandwidth, about 300 FLOP/B on an H100. Below it a kernel is "
     "memory-bound, above it compute-bound; decode does about 2 FLOPs per weight per sequence, "
     "so about the batch size in FLOP/B, far below the ridge at small batch.", 3),
    ("kv-layout-shape", "Per layer a K and a V tensor, each [batch, kv_heads, seq, head_dim]; "
     "under GQA the head axis is the KV heads, where plain MHA gives each query head its own "
     "copy of K and V.", 3),
    ("latency-anti-patterns", "Mistakes: tuning for aggregate tokens per second until big "
     "batches break the TTFT target; recomputing the whole prefix every step with no KV cache; "
     "assuming the KV cache is small compared to the weights and leaving out the dtype; and "
     "thinking speculative decoding helps a cold prompt, when it leaves the prefill as "
     "expensive.", 3),
    ("prefix-cache-hit-metrics", "TTFT: the hit skips the prefill of the cached prefix. It does "
     "not improve latency after the first token, and how often it hits depends on matching and "
     "eviction.", 3),
    ("preemption-swap-or-recompute", "It chooses between swapping and recomputing at random, and "
     "swaps part of the model weights to the CPU.", 1),
    ("preemption-swap-or-recompute", "It preempts the newest sequences and frees their blocks; it can "
     "swap them to CPU memory over PCIe or drop and recompute them on resume. Rather than picking "
     "swap or recompute at random, it weighs the bytes over the link against the prefill FLOPs: "
     "short contexts favour recompute, long caches with a fast link favour swap.", 3),
    # right answers sharing words with a wrong claim, the wrong claims in their wrong form,
    # and half answers that say one side of a trade-off only
    ("wq-activations-harder", "Weights are smooth, so per-channel scales work. The activations "
     "are larger in a handful of outlier channels, around 100x the rest, so one scale per "
     "token wastes most levels on them. SmoothQuant divides each activation channel by a "
     "factor and multiplies the weight row by it, folded offline, so W8A8 costs nothing extra.", 3),
    ("wq-activations-harder", "A few activation channels hold outliers 100 times larger, so a "
     "per-tensor scale leaves the rest a few levels; weights are evenly spread. Unlike "
     "LLM.int8(), which keeps the outlier channels in FP16 and the rest in INT8, SmoothQuant "
     "moves the difficulty into the weights with a per-channel factor folded in offline.", 3),
    ("lora-merge-vs-separate", "For one dedicated model, merge: the low-rank products are "
     "folded into the base weights, so there is no overhead. But a merged copy serves only one "
     "adapter, and two tenants with two merged copies doubles the model size. Kept separate, "
     "one shared base batches many small adapters at the cost of extra low rank products and a "
     "custom kernel.", 3),
    ("kv-layout-shape", "Each layer keeps a K and a V tensor, [batch, kv_heads, seq_len, "
     "head_dim]; some engines hold one tensor per layer with a leading axis of 2, K and V "
     "concatenated. The head axis counts KV heads, and the query head count does not appear.", 3),
    ("kv-formula-units", "2 × layers × KV heads × head_dim × tokens × bytes per element: 2 for "
     "BF16, 1 for FP8, and FP32 is always 4 bytes. KV heads, not query heads; allocator "
     "overhead is left out.", 3),
    ("gqa-cache-change", "Query heads share KV heads in groups, so the cache shrinks by the "
     "group size, while the cache still grows along the sequence dimension. Every query head "
     "still computes its own scores. The model has to be trained or uptrained with it.", 3),
    ("ttft-tpot-streaming", "Users care mainly about two things: when text starts and how "
     "smoothly it flows. TTFT is how fast the text starts to appear, queueing plus prefill; "
     "TPOT is how long you wait between tokens after that. Both matter.", 3),
    ("define-tpot", "The gap between consecutive output tokens after the first. TTFT is the "
     "wait for the first; it is set by the prefill, whereas TPOT is one decode step of the "
     "running batch, so it grows with batch size and context.", 3),
    ("define-ttft", "From sending the request to the first output token: queueing, plus the "
     "time to tokenize the input, plus the prefill of whatever the prefix cache misses.", 3),
    ("goodput-definition", "Goodput counts requests per second that complete without errors "
     "and meet both the TTFT and the TPOT targets. Raw tokens per second is a poor target "
     "because it ignores latency: it keeps rising while requests miss their SLOs. Capacity is "
     "the highest rate at which 90% still meet them.", 3),
    ("littles-law-sizing", "L = λ × W: requests in flight are arrival rate times time in the "
     "system, so 20 req/s for 10 s is 200. Each holds a KV cache, so this sizes the KV pool "
     "and decode batch; it holds for any arrival process, not only if arrivals are Poisson.", 3),
    ("moe-decode-batch-regimes", "At batch 1 only the active 13B are read, the shared weights "
     "and the chosen experts. At batch 256 nearly every expert is picked by some token, so "
     "close to 47B is read. Memory must hold all 47B at both batch sizes; the bandwidth win is "
     "largest at small batch.", 3),
    ("spec-decoding-mechanism", "A draft model guesses k tokens. The big model only checks "
     "them, all in one forward pass that costs about one decode step, and yields at least one "
     "token. Most tokens come from the draft, yet each is accepted by min(1, p/q) with "
     "resampling from the residual, so the output is exactly the target's; Medusa's typical "
     "acceptance is lossy.", 3),
    ("continuous-batching-iteration-level", "The batch is re-formed every decode step: "
     "finished sequences leave, waiting ones join. Static batching pads every request to the "
     "same length and waits until the batch is full, then holds slots until the longest ends, "
     "so slots sit idle. Throughput rises and queueing drops; it needs paged KV memory.", 3),
    ("tree-cost-large-batch", "At batch 1 decode is memory-bound, so compute is not the issue "
     "and the tree still pays off. At large batch every node of every tree costs compute and "
     "the step turns compute-bound, so the extra verify work outweighs the extra accepted "
     "tokens; fall back to a chain under load.", 3),
    ("wq-activations-harder", "Activations are harder because they are larger than the "
     "weights. SmoothQuant keeps the outlier channels in FP16 and the rest in INT8.", 1),
    ("lora-merge-vs-separate", "Merging doubles the model size, since it stores a full-rank "
     "update beside W. Separate adapters are folded into the base GEMM for free.", 1),
    ("kv-layout-shape", "One tensor per layer, [batch, seq, hidden], with K and V concatenated "
     "along the hidden size.", 1),
    ("gqa-cache-change", "GQA shares K and V along the sequence, so consecutive tokens use one "
     "entry. Query heads still compute their own scores.", 1),
    ("ttft-tpot-streaming", "Users care mainly about TTFT. TTFT is how fast the text flows, "
     "and TPOT is how long you wait before anything appears.", 1),
    ("define-tpot", "TPOT is set by the prefill of the prompt, per input token.", 1),
    ("define-ttft", "TTFT is mostly the time to tokenize the input and send it over the "
     "network.", 1),
    ("ttft-tpot-itl-e2e", "TTFT is the time to the first token, ITL the gap between tokens, "
     "TPOT the same as ITL. E2E is TTFT plus ITL.", 1),
    ("littles-law-sizing", "L = λ × W, which sizes the KV pool since each request holds a "
     "cache; it holds only for Poisson arrivals.", 1),
    ("moe-decode-batch-regimes", "The step reads 13B at both batch sizes, since each token "
     "picks two experts. Memory holds 47B.", 1),
    ("mla-tensor-parallel", "TP splits the heads, and the MLA latent is divided by 8 across "
     "the GPUs, so each keeps an eighth.", 1),
    ("spec-decoding-mechanism", "A draft proposes k tokens and the target verifies them one at "
     "a time, one pass each. Speculative decoding is lossy: it approximates the target.", 1),
    ("prefill-compute-decode-bandwidth", "Prefill is compute-bound because its GEMMs cover all "
     "prompt tokens. In decode the weights stay on chip, so the step is bound by copying "
     "tokens back to the CPU.", 1),
    ("continuous-batching-iteration-level", "Continuous batching pads every request to the "
     "same length and streams the batch to the GPU; finished slots sit idle.", 1),
    ("tree-cost-large-batch", "A tree verify pass scores every node of every sequence, but the "
     "tree still pays off at large batch since it accepts more tokens per pass.", 1),
    ("tp-across-nodes", "TP needs all-reduces per layer, fine over NVLink. Across nodes "
     "pipeline parallelism communicates more, since pipeline replicates the weights on every "
     "node.", 1),
    ("vtc-fairness", "VTC counts requests and serves the tenant with the fewest; tokens are "
     "counted only because billing is per token.", 1),
    ("fragmentation-without-paging", "Each request gets a slab of max length. The waste is "
     "mostly padding tokens in the batch, and quantization removes the waste.", 1),
    ("latency-anti-patterns", "Tuning for throughput alone inflates batches until TTFT misses "
     "its target; the opposite mistake, keeping batches too small, wastes the GPU. Re-running "
     "the prefix every step without a KV cache is a toy. Sizing KV memory without the dtype "
     "or KV heads. Hoping speculative decoding fixes a long cold prefill.", 3),
    ("latency-anti-patterns", "The main mistake is caring about latency at all: throughput is "
     "the only metric that matters. Recomputing is cheaper than a KV cache for short prompts.", 1),
    ("chunked-prefill-budget-tradeoff", "Lowering N makes steps shorter and a long prompt "
     "needs more steps.", 2),
    ("admission-kv-reservation", "Reserving the whole output up front means a request always "
     "has room to finish. Admitting on current need can run out of blocks as requests grow, "
     "forcing preemption.", 2),
    ("admission-kv-reservation", "Reserving means fewer requests fit. Admitting on need packs "
     "in more but may run out and preempt.", 2),
]  # fmt: skip


@pytest.fixture(scope="module")
def deck():
    return load_default_bank(cached=False)


@pytest.mark.parametrize(("question", "answer", "rating"), PROBES)
def test_the_suggested_rating(deck, question, answer, rating):
    assert grade(make_instance(deck.get(question), 1), answer).rating == rating


def suggestions(name: str) -> list[dict]:
    """The answers of tests/data/`name`, each with the suggestion the quiz makes for it
    (benchmarks/concept_agreement.graded: None where the grader leaves it to the user)."""
    import sys
    from pathlib import Path

    here = Path(__file__).parent
    sys.path.insert(0, str(here.parent / "benchmarks"))
    from concept_agreement import graded

    return graded(here / "data" / name)


def test_the_review_probes_right_answers_are_never_again_and_the_reading_is_pinned():
    """tests/data/concept_review_probes.yaml: what each probe is -> the suggestion (None:
    the grader leaves it to the user), as counts. No right answer is suggested Again, and
    no wrong or partial one Good."""
    probes = suggestions("concept_review_probes.yaml")
    assert len(probes) == 366
    assert dict(Counter((p["expect"], p["suggested"]) for p in probes)) == {
        ("right", 3): 259, ("right", 2): 13, ("right", None): 11,
        ("partial", 1): 3, ("partial", 2): 15, ("partial", None): 3,
        ("wrong", 1): 54, ("wrong", 2): 3, ("wrong", None): 5,
    }  # fmt: skip


def test_right_answers_in_plain_words_are_never_again():
    """tests/data/concept_plain_right_answers.yaml: 136 right answers in plain words, written
    blind to the cues; the suggestions, as counts. Graded once before the cues were widened
    for them, they gave 112 Good, 21 Hard, 3 none and no Again; where the cues miss a point,
    a right answer gets Hard (or no suggestion), never Again."""
    answers = suggestions("concept_plain_right_answers.yaml")
    assert len(answers) == 136 and len({a["question"] for a in answers}) == 68
    assert dict(Counter(a["suggested"] for a in answers)) == {3: 135, None: 1}
