#!/usr/bin/env node
// A stand-in for `python` with vLLM and/or SGLang installed (FAKE_PYTHON_MODULES, default "vllm,sglang").
// Answers the version probe (`-c "import vllm, sys; print(vllm.__version__)"`), `-m MODULE --help` (with a
// realistic --quantization choice list) and runs a fake engine for `-m vllm.entrypoints.openai.api_server ...`
// or `-m sglang.launch_server ...` (see engine-core.mjs for the modes).
import { record, runEngine } from './engine-core.mjs';

const argv = process.argv.slice(2);
const installed = (process.env.FAKE_PYTHON_MODULES ?? 'vllm,sglang').split(',').filter(Boolean);
const versions = {
  vllm: process.env.FAKE_ENGINE_VERSION ?? '0.10.1',
  sglang: process.env.FAKE_ENGINE_VERSION ?? '0.5.2',
};

function noModule(name) {
  console.error('Traceback (most recent call last):');
  console.error('  File "<string>", line 1, in <module>');
  console.error(`ModuleNotFoundError: No module named '${name}'`);
  process.exit(1);
}

const VLLM_QUANT =
  'aqlm,awq_marlin,awq,deepspeedfp,tpu_int8,fp8,ptpc_fp8,fbgemm_fp8,modelopt,modelopt_fp4,marlin,bitblas,gguf,gptq_marlin_24,gptq_marlin,gptq_bitblas,awq_marlin,gptq,compressed-tensors,bitsandbytes,qqq,hqq,experts_int8,neuron_quant,ipex,quark,moe_wna16,torchao,None';
const SGLANG_QUANT =
  'awq,fp8,gptq,marlin,gptq_marlin,awq_marlin,bitsandbytes,gguf,modelopt,modelopt_fp4,w8a8_int8,w8a8_fp8,moe_wna16,qoq,w4afp8';

function help(module) {
  if (module.startsWith('vllm')) {
    console.log(
      'usage: api_server.py [-h] [--host HOST] [--port PORT] [--model MODEL] [--quantization {' + VLLM_QUANT + '}]',
    );
    console.log('');
    console.log('options:');
    console.log('  --model MODEL         Name or path of the Hugging Face model to use.');
    console.log(`  --quantization {${VLLM_QUANT}}, -q {${VLLM_QUANT}}`);
    console.log('                        Method used to quantize the weights.');
    // FAKE_VLLM_OLD: a vLLM from before diffusion models (no --diffusion-config).
    if (!process.env.FAKE_VLLM_OLD) console.log('  --diffusion-config DIFFUSION_CONFIG');
    console.log('  --override-generation-config OVERRIDE_GENERATION_CONFIG');
  } else {
    console.log('usage: launch_server.py [-h] --model-path MODEL_PATH [--quantization {' + SGLANG_QUANT + '}]');
    console.log('options:');
    console.log(`  --quantization {${SGLANG_QUANT}}`);
    console.log('                        The quantization method.');
  }
}

if (argv[0] === '-c') {
  record({ kind: 'probe', argv });
  const name = /import (\w+)/.exec(argv[1] ?? '')?.[1] ?? '';
  if (!installed.includes(name)) noModule(name);
  console.log(versions[name] ?? '1.0.0');
} else if (argv[0] === '-m') {
  const module = argv[1] ?? '';
  const pkg = module.split('.')[0];
  if (!installed.includes(pkg)) noModule(pkg);
  if (argv.includes('--help')) {
    record({ kind: 'help', argv });
    help(module);
  } else if (module === 'vllm.entrypoints.openai.api_server') {
    await runEngine('vllm', argv.slice(2));
  } else if (module === 'sglang.launch_server') {
    await runEngine('sglang', argv.slice(2));
  } else {
    console.error(`/usr/bin/python3: No module named ${module}`);
    process.exit(1);
  }
} else {
  console.error('python-fake: only -c and -m are supported');
  process.exit(2);
}
