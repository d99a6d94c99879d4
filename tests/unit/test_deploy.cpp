// gpusel deploy: launch settings rendered from a hand-built LaunchSpec (not from a plan, so that
// these tests pin the renderers and not the estimators), read back, and compared. Every expected
// flag was checked by hand against the tool's documentation (docs/deploy.md, "Flags and sources").

#include <catch2/catch.hpp>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "deploy/deploy.hpp"
#include "deploy/launch_text.hpp"

using namespace gpusel;

namespace {

// A 13B chat model on 3 replicas of 2 GPUs (one spare), as a plan would have picked it.
LaunchSpec serving_spec() {
    LaunchSpec spec;
    spec.plan_file = "chat.yaml";
    spec.project = "chat";
    spec.workload = "chat-api";
    spec.gpusel_version = "0.1.0";
    spec.role = Role::inference;
    spec.model = "meta-llama/Llama-2-13b-chat-hf";
    spec.model_label = "llama-2-13b";
    spec.decoder_llm = true;
    spec.gpu = "L40S";
    spec.vendor = "nvidia";
    spec.node_product = "NVIDIA-L40S";
    spec.gpus = 6;
    spec.replicas = 3;
    spec.spare_replicas = 1;
    spec.gpus_per_replica = 2;
    spec.gpus_per_node = 2;
    spec.layout.tensor_parallel = 2;
    spec.layout.data_parallel = 3;
    spec.precision = Precision::fp16;
    spec.weights = WeightFormat::awq;
    spec.kv_cache = KvCacheFormat::fp8;
    spec.engine = Engine::vllm;
    spec.paged_engine = true;
    spec.memory_fraction = 0.88;
    spec.max_model_len = 768;
    spec.max_num_seqs = 256;
    spec.max_num_batched_tokens = 2048;
    spec.block_size = 16;
    spec.batch = 64;
    spec.memory_per_gpu_bytes = 40e9;
    spec.capacity_per_gpu_bytes = 48e9;
    spec.expected_speed = "5000 tok/s";
    return spec;
}

// Llama-2-7B-like pretraining on 2 nodes of 8 GPUs: tp2 pp1 dp8, ZeRO-1, selective recompute.
LaunchSpec training_spec() {
    LaunchSpec spec;
    spec.plan_file = "pretrain.yaml";
    spec.project = "pretrain";
    spec.workload = "Pretrain 7B";
    spec.gpusel_version = "0.1.0";
    spec.role = Role::training;
    spec.training = true;
    spec.model = "llama-2-7b";
    spec.model_label = "llama-2-7b";
    spec.decoder_llm = true;
    spec.architecture.layers = 32;
    spec.architecture.hidden = 4096;
    spec.architecture.heads = 32;
    spec.architecture.kv_heads = 32;
    spec.architecture.ffn = 11008;
    spec.architecture.ffn_gated = true;
    spec.architecture.max_context = 4096;
    spec.gpu = "H100-SXM5";
    spec.vendor = "nvidia";
    spec.node_product = "NVIDIA-H100-80GB-HBM3";
    spec.gpus = 16;
    spec.gpus_per_replica = 16;
    spec.gpus_per_node = 8;
    spec.nodes = 2;
    spec.multi_node = true;
    spec.interconnect = NetworkKind::infiniband;
    spec.layout.tensor_parallel = 2;
    spec.layout.data_parallel = 8;
    spec.layout.sharding = Sharding::zero1;
    spec.precision = Precision::bf16;
    spec.micro_batch = 2;
    spec.gradient_accumulation = 4;
    spec.global_batch = 64;
    spec.seq_len = 4096;
    spec.checkpointing = Checkpointing::selective;
    spec.train_iterations = 1000;
    return spec;
}

std::string body_without_comments(const std::string& text) {
    std::string body;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        if (text[start] != '#') {
            body += text.substr(start, end - start + 1);
        }
        start = end + 1;
    }
    return body;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("deploy targets: names, families and mismatches", "[deploy]") {
    CHECK(parse_deploy_target("tensorrt-llm") == DeployTarget::tensorrt_llm);
    CHECK(parse_deploy_target("Kubernetes") == DeployTarget::kubernetes);
    CHECK_FALSE(parse_deploy_target("k8s"));
    CHECK(deploy_target_names().size() == 8);
    CHECK(target_mismatch(DeployTarget::vllm, Role::inference).empty());
    CHECK(target_mismatch(DeployTarget::slurm, Role::training).empty());
    CHECK(contains(target_mismatch(DeployTarget::vllm, Role::training),
                   "vllm serves inference roles, not the training role"));
    CHECK(contains(target_mismatch(DeployTarget::megatron, Role::inference),
                   "megatron launches training, not the inference role"));
    LaunchSpec cnn = serving_spec();
    cnn.decoder_llm = false;
    CHECK(contains(model_mismatch(DeployTarget::sglang, cnn), "runs decoder LLMs"));
    CHECK(model_mismatch(DeployTarget::kubernetes, cnn).empty());
}

TEST_CASE("GPU product label: known NVML names, else the catalog name as a label value", "[deploy]") {
    GpuSpec a100;
    a100.id = "A100-80GB-SXM4";
    a100.name = "NVIDIA A100 80GB SXM4";
    CHECK(gpu_product_label(a100).value == "NVIDIA-A100-SXM4-80GB");
    CHECK(gpu_product_label(a100).known);
    GpuSpec b200;
    b200.id = "B200";
    b200.name = "NVIDIA B200 (HGX, per GPU)";
    CHECK(gpu_product_label(b200).value == "NVIDIA-B200");
    CHECK_FALSE(gpu_product_label(b200).known);
}

TEST_CASE("shell words: plain when safe, single-quoted otherwise", "[deploy]") {
    using deploy_detail::shell_quote;
    CHECK(shell_quote("meta-llama/Llama-2-13b-chat-hf") == "meta-llama/Llama-2-13b-chat-hf");
    CHECK(shell_quote("a b") == "'a b'");
    CHECK(shell_quote("it's") == "'it'\\''s'");
    CHECK(shell_quote("$LR") == "'$LR'");
    CHECK(shell_quote("$LR", true) == "\"$LR\"");
    CHECK(deploy_detail::yaml_string("no") == "\"no\"");
    CHECK(deploy_detail::yaml_string("8000") == "\"8000\"");
    CHECK(deploy_detail::yaml_string("vllm") == "vllm");
}

TEST_CASE("vllm serve carries the memory model's settings", "[deploy]") {
    const std::vector<Artefact> files = render_launch(DeployTarget::vllm, serving_spec());
    REQUIRE(files.size() == 1);
    CHECK(files[0].name == "chat-api-inference.vllm.sh");
    CHECK(files[0].content.rfind("#!/usr/bin/env bash\n# generated by gpusel 0.1.0 (gpusel deploy --target vllm) "
                                 "from chat.yaml\n",
                                 0) == 0);
    CHECK(contains(files[0].content, "# estimate: 40.0 GB of 48.0 GB per GPU; 5000 tok/s\n"));
    CHECK(body_without_comments(files[0].content) ==
          "set -euo pipefail\n"
          "exec vllm serve meta-llama/Llama-2-13b-chat-hf \\\n"
          "  --tensor-parallel-size 2 \\\n"
          "  --dtype float16 \\\n"
          "  --quantization awq \\\n"
          "  --max-model-len 768 \\\n"
          "  --max-num-seqs 256 \\\n"
          "  --max-num-batched-tokens 2048 \\\n"
          "  --gpu-memory-utilization 0.88 \\\n"
          "  --block-size 16 \\\n"
          "  --kv-cache-dtype fp8 \\\n"
          "  --port 8000\n");
}

TEST_CASE("SGLang and trtllm-serve spell the same settings their way", "[deploy]") {
    const std::string sglang = body_without_comments(render_launch(DeployTarget::sglang, serving_spec())[0].content);
    CHECK(contains(sglang,
                   "exec python3 -m sglang.launch_server \\\n  --model-path meta-llama/Llama-2-13b-chat-hf \\\n"
                   "  --tp-size 2 \\\n"));
    CHECK(contains(sglang,
                   "  --context-length 768 \\\n  --max-running-requests 256 \\\n  --chunked-prefill-size 2048 \\\n"
                   "  --mem-fraction-static 0.88 \\\n  --kv-cache-dtype fp8_e4m3 \\\n"));
    const std::vector<Artefact> trt = render_launch(DeployTarget::tensorrt_llm, serving_spec());
    const std::string body = body_without_comments(trt[0].content);
    CHECK(contains(body,
                   "exec trtllm-serve meta-llama/Llama-2-13b-chat-hf \\\n  --backend pytorch \\\n  --tp_size 2 \\\n"
                   "  --pp_size 1 \\\n  --max_seq_len 768 \\\n  --max_batch_size 256 \\\n  --max_num_tokens 2048 \\\n"
                   "  --kv_cache_free_gpu_memory_fraction 0.88 \\\n"));
    // The plan modelled vLLM, and TensorRT-LLM takes an fp8 KV cache only in its YAML options.
    CHECK(contains(trt[0].content,
                   "# assumption: engine = tensorrt-llm: the plan's estimate modelled vllm (runtime.engine)"));
    CHECK(
        contains(trt[0].content, "# assumption: KV cache = fp8: trtllm-serve takes it in the --extra_llm_api_options"));
}

TEST_CASE("SGLang launches the scheduler receive interval the estimate ran, and reading it back checks it",
          "[deploy]") {
    LaunchSpec spec = serving_spec();
    spec.scheduler_recv_interval = 30;
    const std::string sglang = render_launch(DeployTarget::sglang, spec)[0].content;
    CHECK(contains(sglang, "  --kv-cache-dtype fp8_e4m3 \\\n  --scheduler-recv-interval 30 \\\n"));
    CHECK(compare_launch(spec, read_launch_settings(sglang, "s.sh")).empty());
    // vLLM has no such flag.
    CHECK_FALSE(contains(render_launch(DeployTarget::vllm, spec)[0].content, "recv-interval"));
    // Launched without it, SGLang polls every step: shorter TTFTs than the estimate's.
    spec.scheduler_recv_interval = 1;
    const std::string every_step = render_launch(DeployTarget::sglang, spec)[0].content;
    CHECK_FALSE(contains(every_step, "recv-interval"));
    spec.scheduler_recv_interval = 30;
    const std::vector<std::string> findings = compare_launch(spec, read_launch_settings(every_step, "s.sh"));
    REQUIRE(findings.size() == 1);
    CHECK(findings[0] ==
          "scheduler receive interval 1 (SGLang's default); the speed estimate assumed 30: the TTFT "
          "was estimated for it");
}

TEST_CASE("a target engine other than the plan's takes its own start-up settings", "[deploy]") {
    LaunchSpec spec = serving_spec();
    // SGLang's default mem_fraction_static at TP2 is 0.87 (memory/serving.cpp); its pool has pages of one token.
    spec.engine_settings.push_back({Engine::sglang, 0.87, 768, 256, 8192, 1, true, ""});
    const std::string sglang = render_launch(DeployTarget::sglang, spec)[0].content;
    CHECK(contains(sglang, "  --chunked-prefill-size 8192 \\\n  --mem-fraction-static 0.87 \\\n"));
    const std::string vllm = render_launch(DeployTarget::vllm, spec)[0].content;
    CHECK(contains(vllm, "  --gpu-memory-utilization 0.88 \\\n"));
    // Read back, each is held to its own engine's settings.
    CHECK(compare_launch(spec, read_launch_settings(sglang, "s.sh")).empty());
    CHECK(compare_launch(spec, read_launch_settings(vllm, "v.sh")).empty());
}

TEST_CASE("an FP8 pick on 16-bit weights launches FP8: --quantization fp8 where the engine has it", "[deploy]") {
    // The estimate ran FP8 GEMMs on a bf16 checkpoint: vLLM and SGLang quantize it as they load
    // (W8A8); trtllm-serve has no flag, so the launch says how to build the engine.
    LaunchSpec spec = serving_spec();
    spec.weights = WeightFormat::bf16;
    spec.precision = Precision::fp8;
    const std::string vllm = render_launch(DeployTarget::vllm, spec)[0].content;
    CHECK(contains(vllm, "  --dtype auto \\\n  --quantization fp8 \\\n"));
    const std::string sglang = render_launch(DeployTarget::sglang, spec)[0].content;
    CHECK(contains(sglang, "  --quantization fp8 \\\n"));
    const std::string trt = render_launch(DeployTarget::tensorrt_llm, spec)[0].content;
    CHECK_FALSE(contains(trt, "--quantization"));
    CHECK(contains(trt, "# assumption: precision = fp8: the estimate runs FP8 GEMMs: quantize the checkpoint"));
    // Read back, the launch agrees; without the flag's value it would run bf16 GEMMs.
    CHECK(compare_launch(spec, read_launch_settings(vllm, "v.sh")).empty());
    // bf16 compute on the same weights needs no flag at all.
    spec.precision = Precision::bf16;
    CHECK_FALSE(contains(render_launch(DeployTarget::vllm, spec)[0].content, "--quantization"));
    // Quantized weights keep their own method whatever the compute precision.
    spec.weights = WeightFormat::awq;
    spec.precision = Precision::fp8;
    CHECK(contains(render_launch(DeployTarget::vllm, spec)[0].content, "  --quantization awq \\\n"));
}

TEST_CASE("NVFP4 and MXFP4 checkpoints launch without a quantization flag, an FP8 KV cache with one", "[deploy][fp4]") {
    // The checkpoint's quantization config selects the FP4 kernels (vLLM modelopt_fp4 / mxfp4,
    // SGLang the same, TensorRT-LLM from hf_quant_config.json); the KV-cache dtype is a flag.
    LaunchSpec spec = serving_spec();
    spec.precision = Precision::bf16;
    spec.kv_cache = KvCacheFormat::fp8;
    for (const WeightFormat weights : {WeightFormat::nvfp4, WeightFormat::mxfp4}) {
        spec.weights = weights;
        CHECK(deploy_detail::quantization_flag_value(weights, Precision::bf16, Engine::vllm).empty());
        CHECK(deploy_detail::quantization_flag_value(weights, Precision::fp8, Engine::sglang).empty());
        const std::string vllm = render_launch(DeployTarget::vllm, spec)[0].content;
        CHECK_FALSE(contains(vllm, "--quantization"));
        CHECK(contains(vllm, "  --kv-cache-dtype fp8 \\\n"));
        CHECK(contains(vllm, "# assumption: weights = " + std::string(to_string(weights)) +
                                 ": a checkpoint already quantized to " + std::string(to_string(weights))));
        const std::string sglang = render_launch(DeployTarget::sglang, spec)[0].content;
        CHECK_FALSE(contains(sglang, "--quantization"));
        CHECK(contains(sglang, "  --kv-cache-dtype fp8_e4m3 \\\n"));
        const std::string trt = render_launch(DeployTarget::tensorrt_llm, spec)[0].content;
        CHECK(contains(trt, "# assumption: KV cache = fp8"));
        // Read back, the launch agrees with the plan, and so does one that names the method.
        CHECK(compare_launch(spec, read_launch_settings(vllm, "v.sh")).empty());
    }
    spec.weights = WeightFormat::nvfp4;
    std::string named = render_launch(DeployTarget::vllm, spec)[0].content;
    named.replace(named.find("  --kv-cache-dtype"), 0, "  --quantization modelopt_fp4 \\\n");
    CHECK(compare_launch(spec, read_launch_settings(named, "v.sh")).empty());
    std::string wrong = render_launch(DeployTarget::vllm, spec)[0].content;
    wrong.replace(wrong.find("  --kv-cache-dtype"), 0, "  --quantization awq \\\n");
    CHECK(compare_launch(spec, read_launch_settings(wrong, "v.sh")).size() == 1);
    // Block-scaled FP8 (DeepSeek-V3) loads with the fp8 method, as per-tensor FP8 does.
    spec.weights = WeightFormat::fp8_block;
    CHECK(contains(render_launch(DeployTarget::vllm, spec)[0].content, "  --quantization fp8 \\\n"));
}

TEST_CASE("DeepSpeed configuration: batch sizes multiply out, ZeRO stage and precision", "[deploy]") {
    LaunchSpec spec = training_spec();
    spec.layout.tensor_parallel = 1;
    spec.layout.data_parallel = 16;
    spec.layout.sharding = Sharding::zero3;
    spec.layout.offload = Offload::optimizer;
    spec.global_batch = 128;  // 2 × 4 × 16
    CHECK(deploy_detail::deepspeed_config_json(spec) ==
          "{\n"
          "  \"train_batch_size\": 128,\n"
          "  \"train_micro_batch_size_per_gpu\": 2,\n"
          "  \"gradient_accumulation_steps\": 4,\n"
          "  \"bf16\": {\n    \"enabled\": true\n  },\n"
          "  \"fp16\": {\n    \"enabled\": false\n  },\n"
          "  \"zero_optimization\": {\n"
          "    \"stage\": 3,\n"
          "    \"offload_optimizer\": {\n      \"device\": \"cpu\",\n      \"pin_memory\": true\n    }\n"
          "  }\n"
          "}\n");
    const std::vector<Artefact> files = render_launch(DeployTarget::deepspeed, spec);
    REQUIRE(files.size() == 2);
    CHECK(files[1].name == "pretrain-7b-training.ds_config.json");
    const std::string body = body_without_comments(files[0].content);
    CHECK(contains(body, "export NCCL_IB_DISABLE=0\n"));
    CHECK(contains(body,
                   "exec deepspeed \\\n  --num_nodes 2 \\\n  --num_gpus 8 \\\n  --hostfile hostfile \\\n"
                   "  --master_port 29500 \\\n  train.py \\\n"));
    CHECK(contains(body,
                   "  --deepspeed pretrain-7b-training.ds_config.json \\\n  --per_device_train_batch_size 2 \\\n"
                   "  --gradient_accumulation_steps 4 \\\n  --bf16\n"));
}

TEST_CASE("DeepSpeed with a tensor-parallel pick: the batch multiplies out over every GPU", "[deploy]") {
    // DeepSpeed without a model-parallel unit asserts train_batch_size == micro × accumulation ×
    // world size. The pick: tp2 dp8 on 16 GPUs, micro-batch 2, accumulation 4, global batch 64.
    LaunchSpec spec = training_spec();
    REQUIRE(spec.layout.tensor_parallel == 2);
    spec.micro_batch = 2;
    spec.gradient_accumulation = 4;
    spec.global_batch = 64;
    const std::vector<Artefact> files = render_launch(DeployTarget::deepspeed, spec);
    REQUIRE(files.size() == 2);
    const auto config = nlohmann::json::parse(files[1].content);
    // 64 samples per step over 16 data-parallel ranks of 2: 2 accumulation steps.
    CHECK(config.at("train_batch_size").get<int>() == 64);
    CHECK(config.at("train_micro_batch_size_per_gpu").get<int>() == 2);
    CHECK(config.at("gradient_accumulation_steps").get<int>() == 2);
    CHECK(contains(files[0].content, "  --gradient_accumulation_steps 2 \\\n"));
    CHECK(contains(files[0].content,
                   "the launch runs all 16 GPUs data parallel, 2 accumulation steps for a global "
                   "batch of 64; the memory estimate holds for this layout only with --target "
                   "megatron"));
    // A global batch the world does not divide: the nearest that multiplies out, and the plan's named.
    spec.global_batch = 40;  // 40 / 32 rounds to 1 step: 32
    const std::vector<Artefact> odd = render_launch(DeployTarget::deepspeed, spec);
    const auto odd_config = nlohmann::json::parse(odd[1].content);
    CHECK(odd_config.at("train_batch_size").get<int>() == 32);
    CHECK(odd_config.at("gradient_accumulation_steps").get<int>() == 1);
    CHECK(contains(odd[0].content, "1 accumulation step for a global batch of 32 (the plan's: 40)"));
}

TEST_CASE("Megatron-LM: layout, batch, recompute and the model's shape as flags", "[deploy]") {
    const std::vector<Artefact> files = render_launch(DeployTarget::megatron, training_spec());
    REQUIRE(files.size() == 1);
    const std::string body = body_without_comments(files[0].content);
    CHECK(contains(body,
                   "exec torchrun \\\n  --nnodes 2 \\\n  --nproc-per-node 8 \\\n  --rdzv-backend c10d \\\n"
                   "  --rdzv-endpoint \"$MASTER_ADDR:29500\" \\\n"));
    for (const char* part :
         {"  --tensor-model-parallel-size 2 \\\n  --pipeline-model-parallel-size 1 \\\n",
          "  --num-layers 32 \\\n  --hidden-size 4096 \\\n  --ffn-hidden-size 11008 \\\n  --num-attention-heads 32 \\\n"
          "  --swiglu \\\n  --position-embedding-type rope \\\n  --normalization RMSNorm \\\n  --disable-bias-linear "
          "\\\n"
          "  --untie-embeddings-and-output-weights \\\n  --seq-length 4096 \\\n  --max-position-embeddings 4096 \\\n",
          "  --micro-batch-size 2 \\\n  --global-batch-size 64 \\\n  --bf16 \\\n  --recompute-granularity selective "
          "\\\n"
          "  --use-distributed-optimizer \\\n  --train-iters 1000 \\\n"}) {
        CHECK(contains(body, part));
    }
    CHECK_FALSE(contains(body, "--group-query-attention"));  // 32 KV heads = 32 heads: plain MHA
    CHECK_FALSE(contains(body, "--context-parallel-size"));
}

TEST_CASE("pre-training starts from random weights, a fine-tune from the base checkpoint", "[deploy]") {
    LaunchSpec spec = training_spec();  // kind training
    const std::string pretrain = body_without_comments(render_launch(DeployTarget::megatron, spec)[0].content);
    CHECK_FALSE(contains(pretrain, "--load"));
    CHECK_FALSE(contains(pretrain, "--finetune"));
    CHECK(contains(pretrain, "  --save \"$SAVE_PATH\" \\\n  --lr \"$LR\" \\\n"));
    spec.layout.tensor_parallel = 1;  // DeepSpeed's train.py builds the model from its configuration
    CHECK(contains(render_launch(DeployTarget::deepspeed, spec)[0].content,
                   "  train.py \\\n  --config_name llama-2-7b \\\n  --deepspeed "));

    spec.fine_tuning = true;  // full fine-tune: Megatron-LM loads the converted checkpoint, resets the step
    spec.layout.tensor_parallel = 2;
    const std::vector<Artefact> megatron = render_launch(DeployTarget::megatron, spec);
    CHECK(contains(body_without_comments(megatron[0].content),
                   "  --load \"$CHECKPOINT_PATH\" \\\n  --finetune \\\n  --save \"$SAVE_PATH\" \\\n"));
    CHECK(contains(megatron[0].content, "# assumption: base checkpoint = $CHECKPOINT_PATH: a full fine-tune starts"));
    spec.layout.tensor_parallel = 1;
    CHECK(contains(render_launch(DeployTarget::deepspeed, spec)[0].content,
                   "  train.py \\\n  --model_name_or_path llama-2-7b \\\n  --deepspeed "));
}

TEST_CASE("Megatron-LM: context parallelism is a flag, and alone it still needs Megatron", "[deploy]") {
    LaunchSpec spec = training_spec();
    spec.context_parallel = 2;
    const std::string body = body_without_comments(render_launch(DeployTarget::megatron, spec)[0].content);
    CHECK(contains(body, "  --pipeline-model-parallel-size 1 \\\n  --context-parallel-size 2 \\\n"));
    // No tensor or pipeline split: DeepSpeed has no ring attention, so the automatic target is Megatron.
    spec.layout.tensor_parallel = 1;
    CHECK(deploy_detail::uses_megatron(spec));
    spec.context_parallel = 1;
    CHECK_FALSE(deploy_detail::uses_megatron(spec));
}

TEST_CASE("Megatron-LM: the interleaved schedule's model chunks, split the three ways Megatron-LM knows", "[deploy]") {
    LaunchSpec spec = training_spec();  // 32 layers
    spec.layout.pipeline_parallel = 4;
    spec.virtual_stages = 2;
    const auto body = [&spec] { return body_without_comments(render_launch(DeployTarget::megatron, spec)[0].content); };
    const auto interleaving_assumed = [&spec] {
        const std::string text = render_launch(DeployTarget::megatron, spec)[0].content;
        return contains(text, "# assumption: interleaved pipeline = ");
    };
    // 32 layers / (4 stages × 2 chunks) = 4 layers per chunk.
    CHECK(contains(body(), "  --pipeline-model-parallel-size 4 \\\n  --num-layers-per-virtual-pipeline-stage 4 \\\n"));
    CHECK_FALSE(contains(body(), "--num-virtual-stages-per-pipeline-rank"));
    CHECK_FALSE(interleaving_assumed());
    // 30 layers + embedding + loss = 32 = 4 × 2 × 4: NeMo's 405B way (126 + 2 = 8 × 8 × 2).
    spec.architecture.layers = 30;
    CHECK(contains(body(),
                   "  --num-virtual-stages-per-pipeline-rank 2 \\\n  --account-for-embedding-in-pipeline-split "
                   "\\\n  --account-for-loss-in-pipeline-split \\\n"));
    CHECK_FALSE(interleaving_assumed());
    // 29 layers split neither way: the chunk count, and the uneven split left to the user, said.
    spec.architecture.layers = 29;
    CHECK(contains(body(), "  --num-virtual-stages-per-pipeline-rank 2 \\\n  --num-layers 29 \\\n"));
    CHECK(contains(render_launch(DeployTarget::megatron, spec)[0].content,
                   "# assumption: interleaved pipeline = 2 model chunks per stage: 29 layers do not split evenly into "
                   "4 stages × 2 chunks; give Megatron-LM the uneven split (--decoder-first-pipeline-num-layers, "
                   "--decoder-last-pipeline-num-layers)\n"));
    // One chunk per stage: the plain 1F1B schedule, no flag.
    spec.virtual_stages = 1;
    CHECK_FALSE(contains(body(), "virtual"));
}

TEST_CASE("Kubernetes: GPU limits, node selector and replicas, and an indexed Job across nodes", "[deploy]") {
    const std::string serving = render_launch(DeployTarget::kubernetes, serving_spec())[0].content;
    CHECK(contains(serving, "kind: Deployment\n"));
    CHECK(contains(serving, "spec:\n  replicas: 3\n"));
    CHECK(contains(serving, "      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-L40S\n"));
    CHECK(contains(serving, "              nvidia.com/gpu: 2\n"));
    CHECK(contains(serving,
                   "          command:\n            - vllm\n            - serve\n"
                   "            - meta-llama/Llama-2-13b-chat-hf\n"));
    CHECK(contains(serving, "          emptyDir:\n            medium: Memory\n"));
    const std::string training = render_launch(DeployTarget::kubernetes, training_spec())[0].content;
    CHECK(contains(training, "kind: Service\n"));
    CHECK(contains(training, "  clusterIP: None\n"));
    CHECK(contains(training, "  completions: 2\n  parallelism: 2\n  completionMode: Indexed\n"));
    CHECK(contains(training, "            - \"$(JOB_COMPLETION_INDEX)\"\n"));
    CHECK(contains(training, "            - \"$(LR)\"\n"));  // Kubernetes expands $(NAME), not $NAME
    CHECK(contains(training, "              nvidia.com/gpu: 8\n"));
}

TEST_CASE("Slurm: nodes, GPUs per node, one torchrun per node", "[deploy]") {
    const std::string script = render_launch(DeployTarget::slurm, training_spec())[0].content;
    CHECK(contains(script, "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"));
    CHECK(contains(script, "srun torchrun \\\n  --nnodes \"$SLURM_NNODES\" \\\n  --nproc-per-node 8 \\\n"));
    const std::string serving = render_launch(DeployTarget::slurm, serving_spec())[0].content;
    CHECK(contains(serving, "#SBATCH --array=0-2\n#SBATCH --nodes=1\n"));
}

TEST_CASE("a vllm command read back from shell text", "[deploy]") {
    const std::string text =
        "#!/bin/sh\n# --tensor-parallel-size 8 in a comment is not read\n"
        "CUDA_VISIBLE_DEVICES=0,1 vllm serve 'my model' \\\n"
        "    --tensor-parallel-size=2 --gpu_memory_utilization 0.8 \\\n"
        "    --max-model-len \"4096\" --kv-cache-dtype auto -q awq_marlin\n";
    const LaunchSettings settings = read_launch_settings(text, "serve.sh");
    CHECK(settings.kind == "vllm command line");
    CHECK(settings.tensor_parallel == 2);
    CHECK(settings.memory_fraction == Approx(0.8));
    CHECK(settings.max_model_len == 4096);
    CHECK(settings.kv_cache_dtype == "auto");
    CHECK(settings.quantization == "awq_marlin");
    CHECK_FALSE(settings.max_num_seqs);

    LaunchSpec spec = serving_spec();
    spec.kv_cache = KvCacheFormat::fp16;
    const std::vector<std::string> findings = compare_launch(spec, settings);
    REQUIRE(findings.size() == 2);
    CHECK(findings[0] ==
          "memory fraction 0.8; the estimate assumed 0.88: a smaller KV-cache pool holds fewer "
          "sequences than estimated");
    CHECK(findings[1] == "max model length 4096; the estimate assumed 768");
}

TEST_CASE("bad launch files: an error with the line", "[deploy]") {
    CHECK_THROWS_AS(read_launch_settings("echo hello\n", "x.sh"), InputError);
    try {
        read_launch_settings("vllm serve m \\\n  --tensor-parallel-size two\n", "x.sh");
        FAIL("expected an InputError");
    } catch (const InputError& error) {
        CHECK(format_diagnostic(error.diagnostics().front()) ==
              "x.sh:2:3: --tensor-parallel-size: 'two' is not a count");
    }
}

TEST_CASE("every rendered launch reads back as agreeing, an edited one does not", "[deploy]") {
    for (const DeployTarget target : {DeployTarget::vllm, DeployTarget::sglang, DeployTarget::kubernetes}) {
        CAPTURE(to_string(target));
        LaunchSpec spec = serving_spec();
        spec.engine = target == DeployTarget::sglang ? Engine::sglang : Engine::vllm;
        const std::string text = render_launch(target, spec)[0].content;
        CHECK(compare_launch(spec, read_launch_settings(text, "launch")).empty());
    }
    const LaunchSpec spec = serving_spec();
    std::string manifest = render_launch(DeployTarget::kubernetes, spec)[0].content;
    manifest.replace(manifest.find("nvidia.com/gpu: 2"), 17, "nvidia.com/gpu: 1");
    manifest.replace(manifest.find("replicas: 3"), 11, "replicas: 2");
    const std::vector<std::string> findings = compare_launch(spec, read_launch_settings(manifest, "k8s.yaml"));
    REQUIRE(findings.size() == 3);
    CHECK(findings[0] == "1 GPUs per replica; the plan assumed 2");
    CHECK(findings[1] == "2 replicas; the plan assumed 3 (1 spare)");
    CHECK(findings[2] == "2 GPUs in all; the plan has 6");
    const std::string training = render_launch(DeployTarget::kubernetes, training_spec())[0].content;
    CHECK(compare_launch(training_spec(), read_launch_settings(training, "job.yaml")).empty());
}

TEST_CASE("a manifest read back: helm's commented separators, end markers, block scalars", "[deploy]") {
    const LaunchSpec spec = serving_spec();
    const std::string rendered = render_launch(DeployTarget::kubernetes, spec)[0].content;
    // As `helm template` writes it: a ConfigMap first, each document opened by "--- # Source: ...".
    const std::string config_map =
        "--- # Source: chart/templates/configmap.yaml\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n"
        "  notes.md: |\n    front matter\n    ---\n    replicas: 9\n    ...\n";
    const std::string helm = config_map + "--- # Source: chart/templates/deployment.yaml\n" + rendered + "...\n";
    CHECK(compare_launch(spec, read_launch_settings(helm, "helm.yaml")).empty());
    // A document after an end marker needs no "---".
    CHECK(compare_launch(spec, read_launch_settings(config_map + "...\n" + rendered, "end.yaml")).empty());

    // Positions count lines of the whole file, however many documents come first.
    std::string many;
    for (int i = 0; i < 3; ++i) {
        many += "--- # Source: chart/templates/cm" + std::to_string(i) + ".yaml\napiVersion: v1\nkind: ConfigMap\n";
    }
    std::string edited = rendered;
    edited.replace(edited.find("replicas: 3"), 11, "replicas: x");
    const std::string_view before_replicas = std::string_view(edited).substr(0, edited.find("replicas: x"));
    const auto replicas_line = 11 + std::count(before_replicas.begin(), before_replicas.end(), '\n');
    try {
        read_launch_settings(many + "---\n" + edited, "many.yaml");
        FAIL("expected an InputError");
    } catch (const InputError& error) {
        CHECK(format_diagnostic(error.diagnostics().front()) ==
              fmt::format("many.yaml:{}:13: spec.replicas: 'x' is not a count", replicas_line));
    }
}

TEST_CASE("a manifest of 20,000 documents reads in linear time", "[deploy]") {
    // Padding each document with a newline per line in front made this quadratic (issue 38).
    const LaunchSpec spec = serving_spec();
    std::string manifest = render_launch(DeployTarget::kubernetes, spec)[0].content;
    for (int i = 0; i < 20000; ++i) {
        manifest += "---\nkind: ConfigMap\n";
    }
    CHECK(compare_launch(spec, read_launch_settings(manifest, "big.yaml")).empty());
}

TEST_CASE("an AMD pick: amd.com/gpu, no GFD node selector, no TensorRT-LLM", "[deploy]") {
    LaunchSpec spec = serving_spec();
    spec.gpu = "MI300X";
    spec.vendor = "amd";
    spec.gpu_resource = "amd.com/gpu";
    const std::string manifest = render_launch(DeployTarget::kubernetes, spec)[0].content;
    CHECK(contains(manifest, "              amd.com/gpu: 2\n"));
    CHECK(contains(manifest, "        - key: amd.com/gpu\n"));
    CHECK_FALSE(contains(manifest, "nodeSelector"));
    CHECK(compare_launch(spec, read_launch_settings(manifest, "amd.yaml")).empty());
    CHECK(contains(model_mismatch(DeployTarget::tensorrt_llm, spec), "tensorrt-llm runs on NVIDIA GPUs"));
    CHECK(model_mismatch(DeployTarget::vllm, spec).empty());
}

TEST_CASE("a Megatron-LM launch read back: context parallelism and model chunks, absent ones at Megatron's 1",
          "[deploy]") {
    LaunchSpec spec = training_spec();  // 32 layers, tp2 over 2 nodes of 8
    spec.layout.pipeline_parallel = 4;
    spec.layout.tensor_parallel = 1;
    spec.layout.data_parallel = 4;
    spec.context_parallel = 2;
    spec.virtual_stages = 2;
    const std::string rendered = render_launch(DeployTarget::megatron, spec)[0].content;
    const LaunchSettings read = read_launch_settings(rendered, "m.sh");
    CHECK(read.megatron);
    CHECK(read.context_parallel == 2);
    CHECK(read.layers_per_virtual_stage == 4);
    CHECK(read.layers == 32);
    CHECK(compare_launch(spec, read).empty());
    // The same chunks by count.
    CHECK(compare_launch(spec,
                         read_launch_settings("torchrun pretrain_gpt.py --pipeline-model-parallel-size 4 "
                                              "--context-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2\n",
                                              "count.sh"))
              .empty());
    // Both flags dropped: Megatron-LM runs cp 1 and the plain 1F1B schedule.
    const std::vector<std::string> dropped = compare_launch(
        spec,
        read_launch_settings("torchrun pretrain_gpt.py --pipeline-model-parallel-size 4 --num-layers 32\n", "d.sh"));
    REQUIRE(dropped.size() == 2);
    CHECK(dropped[0] ==
          "context-parallel size 1 (Megatron-LM's default); the plan assumed 2: the activations per GPU "
          "were estimated for each sequence split over 2 GPUs");
    CHECK(dropped[1] ==
          "1 model chunk per pipeline stage; the step time assumed 2 (the interleaved schedule's bubble "
          "is (stages − 1) / chunks micro-batches)");
    // 8 layers per chunk of 32 layers over 4 stages is one chunk per stage.
    const std::vector<std::string> coarse = compare_launch(
        spec,
        read_launch_settings("torchrun pretrain_gpt.py --pipeline-model-parallel-size 4 --context-parallel-size 2 "
                             "--num-layers 32 --num-layers-per-virtual-pipeline-stage 8\n",
                             "c.sh"));
    REQUIRE(coarse.size() == 1);
    CHECK(coarse[0].rfind("1 model chunk per pipeline stage; the step time assumed 2", 0) == 0);
    // A DeepSpeed launch has neither setting: nothing to compare.
    CHECK_FALSE(
        read_launch_settings("deepspeed --num_gpus 8 train.py --per_device_train_batch_size 2\n", "ds.sh").megatron);
}

TEST_CASE("training launches read back: layout, GPUs per node, nodes and batches", "[deploy]") {
    const LaunchSpec spec = training_spec();
    for (const DeployTarget target : {DeployTarget::megatron, DeployTarget::slurm, DeployTarget::kubernetes}) {
        CAPTURE(to_string(target));
        CHECK(compare_launch(spec, read_launch_settings(render_launch(target, spec)[0].content, "t")).empty());
    }
    LaunchSpec zero3 = spec;
    zero3.layout.tensor_parallel = 1;
    zero3.layout.data_parallel = 16;
    const std::string launcher = render_launch(DeployTarget::deepspeed, zero3)[0].content;
    const LaunchSettings read = read_launch_settings(launcher, "ds.sh");
    CHECK(read.kind == "deepspeed command line");
    CHECK(read.gpus_per_pod == 8);
    CHECK(read.pods == 2);
    CHECK(compare_launch(zero3, read).empty());
    const std::vector<std::string> findings = compare_launch(
        spec, read_launch_settings("torchrun --nnodes 2 --nproc-per-node 4 pretrain_gpt.py "
                                   "--tensor-model-parallel-size 2 --micro-batch-size 4 --global-batch-size 64\n",
                                   "edited.sh"));
    REQUIRE(findings.size() == 3);
    CHECK(findings[0] == "micro-batch 4; the memory estimate assumed 2");
    CHECK(findings[1] == "4 GPUs per node; the plan assumed 8");
    CHECK(findings[2] == "8 GPUs in all; the plan has 16");
}
