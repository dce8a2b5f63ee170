/**
 * What each kernel parameter means, and the cross-parameter rules each kernel's `constraints`
 * enforces, for /openapi.json: `kernelParamsSchema` attaches the text as the joi description of
 * every parameter (with its bounds and default appended), and the kernel route's description lists
 * the rules (a violation is 422 `value_error` naming the parameter). `keywords` are JSON Schema
 * keywords for single-parameter rules that joi does not check itself (the constraint does).
 * A test holds this table to the registry: every parameter described, every constraint message listed.
 */
export interface KernelDocs {
  params: Record<string, string>;
  /** The messages of `constraints`, verbatim. */
  rules?: readonly string[];
  /** Documentation-only JSON Schema keywords per parameter. */
  keywords?: Record<string, Record<string, unknown>>;
}

export const SEED_DOC = 'PRNG seed (uint32): every random ingredient is drawn from named streams of it, so the same seed and parameters give byte-identical bodies';

const GRAPH = {
  n: 'nodes of the dependency DAG (Price cumulative-advantage growth)',
  m: 'edges each new node attaches to earlier nodes (Price model out-degree)',
};

const FIRE = {
  ...GRAPH,
  duration_ms: 'simulated time of the leaky integrate-and-fire run, ms',
  drive_mv: 'constant input drive of the source neurons, mV',
  sources: 'number of driven source neurons (the first nodes of the DAG)',
  w_syn_mv: 'synaptic weight: jump of the membrane potential per incoming spike, mV',
  bg_rate_hz: 'rate of the Poisson background input per neuron, Hz (0: none)',
  bg_w_mv: 'weight of one background input event, mV',
};
const SOURCES_RULE = 'sources must not exceed n';

export const KERNEL_DOCS: Record<string, KernelDocs> = {
  'herotq/quantize': {
    params: {
      n_in: 'input width of the linear layer (a power of two: Walsh–Hadamard rotation)',
      n_out: 'output width of the linear layer',
      calib: 'calibration inputs used to estimate the Hessian',
      bits: 'integer bits of the round-to-nearest quantiser',
      outliers: 'input channels given outlier magnitude',
      outlier_gain: 'magnitude multiplier of the outlier channels',
    },
    rules: ['n_in must be a power of two (Walsh–Hadamard rotation)', 'calib must be at least n_in (full-rank Hessian)', 'outliers must not exceed n_in/4'],
    keywords: { n_in: { enum: [8, 16, 32, 64] } },
  },
  'gitthoughts/tree': {
    params: {
      beam: 'beam width of the breadth-first Tree-of-Thoughts search',
      rollouts: 'random rollouts per scored state (0: exact enumeration as the value function)',
      numbers: 'the Game of 24 numbers: four comma-separated integers 1…13 (empty: drawn from the seed)',
    },
    rules: ['numbers must be four comma-separated integers 1…13, e.g. 4,7,8,8'],
  },
  'keyless/attention': {
    params: { seq_len: 'sequence length (tokens)', d_model: 'model width', d_head: 'head width (at most d_model)', heads: 'attention heads' },
    rules: ['d_head must not exceed d_model'],
  },
  'opera/reward': {
    params: {
      group: 'rollouts per GRPO group',
      length: 'tokens per rollout',
      vocab: 'vocabulary size',
      reflect_rate: 'probability that a position is a reflective state',
      window: 'tokens after a reflective state over which the perplexity reduction is measured',
      gain: 'strength of the perplexity reduction a reflection brings',
    },
  },
  'ctxready/unroll': {
    params: {
      seq_len: 'sequence length (tokens)',
      d_model: 'model width',
      vocab: 'vocabulary size',
      unroll: 'K: parallel unroll steps of the correction network (0: none)',
      gain: 'gain of the correction network',
    },
  },
  'dla/attention': {
    params: {
      seq_len: 'sequence length (tokens)',
      d: 'head width',
      capacity: 'most linear-attention states kept at once',
      tau: 'drift threshold that opens a new state',
      switch_prob: 'probability per token that the synthetic source switches regime',
    },
  },
  'fgbrain/graph': { params: GRAPH },
  'fgbrain/fire': { params: FIRE, rules: [SOURCES_RULE] },
  'fgbrain/repair': {
    params: {
      n: GRAPH.n,
      m: GRAPH.m,
      lesion: 'node ids to delete, in order (1–8 distinct ids below n; null: drawn from the seed)',
      heal: 'forgiving-tree: reconstruct each deletion with a Forgiving Tree; none: delete only',
    },
    rules: ['every lesion id must be below n'],
  },
  'fgbrain/plasticity': {
    params: {
      ...FIRE,
      a_plus: 'STDP potentiation amplitude (pre before post)',
      a_minus: 'STDP depression amplitude (post before pre)',
      tau_plus_ms: 'potentiation time constant, ms',
      tau_minus_ms: 'depression time constant, ms',
      w_init: 'initial synaptic weight (at most w_max)',
      w_max: 'upper bound of a synaptic weight',
    },
    rules: [SOURCES_RULE, 'w_init must not exceed w_max'],
  },
  'fgbrain/memory': {
    params: {
      neurons: 'neurons of the Hopfield network (at most 96 in graph mode)',
      patterns: 'patterns stored by the Hebbian rule',
      corruption: 'fraction of a cue flipped before recall',
      max_sweeps: 'most asynchronous update sweeps of a recall',
      connectivity: 'full: all-to-all weights; graph: only along the dependency DAG',
      m: GRAPH.m,
    },
    rules: ['neurons must be at most 96 in graph mode'],
  },
  'fgbrain/vitals': { params: FIRE, rules: [SOURCES_RULE] },
  'fgbrain/vitals/energy': {
    params: {
      ...FIRE,
      atp_per_spike: 'ATP molecules per action potential',
      atp_per_synaptic_event: 'ATP molecules per synaptic event',
      atp_rest_per_neuron_s: 'ATP molecules per neuron per second at rest',
      joule_per_atp: 'energy of one ATP hydrolysis, J',
    },
    rules: [SOURCES_RULE],
  },
  'fgbrain/evolve': {
    params: {
      dim: 'dimension of the linear readout being fitted',
      samples: 'training samples (at least dim)',
      lambda: 'λ: offspring per generation of the (1+λ)-ES',
      generations: 'generations of the evolution strategy',
      sigma0: 'initial mutation step size',
      noise: 'standard deviation of the target noise',
    },
    rules: ['samples must be at least dim'],
  },
  'fgbrain/manifest': {
    params: { n: GRAPH.n, m: GRAPH.m, include: 'artifacts to include in the manifest: any of params, graph, spectrum, fire, memory, kernels' },
  },
  'nvfp4/quantize': {
    params: {
      n: 'values in the synthetic tensor',
      outlier_rate: 'fraction of values that are outliers',
      outlier_scale: 'magnitude multiplier of the outliers',
      rounding: 'rne: round to nearest even; stochastic: stochastic rounding',
      rht: 'apply a random Hadamard transform before quantising',
    },
  },
  'specexec/tree': {
    params: {
      vocab: 'vocabulary size',
      budget: 'draft tree size (tokens)',
      max_depth: 'deepest level of the draft tree',
      trials: 'Monte Carlo trials checking the expected acceptance',
      draft_noise: 'how far the draft model departs from the target',
      sharpness: 'sharpness (inverse temperature) of the target distribution',
    },
  },
  'muon/orthogonalize': {
    params: { rows: 'rows of the matrix', cols: 'columns of the matrix', steps: 'Newton–Schulz iterations', decay: 'singular-value decay of the synthetic matrix (0: flat spectrum)' },
  },
  'cc-attest/info': { params: { stages: 'measured-boot stages in the reference catalogue' } },
  'sement/info': {
    params: { K: 'answers sampled in the worked example', n_clusters: 'distinct meanings among the answers (at most K)', threshold: 'entailment score above which two answers share a meaning' },
    rules: ['n_clusters must be <= K'],
  },
  'flower/graph': {
    params: {
      petals: 'petals (clusters) of the flower graph',
      petal_size: 'nodes per petal',
      core: 'nodes of the core',
      p_in: 'edge probability inside a petal',
      p_out: 'edge probability between petals',
      p_core: 'edge probability between the core and a petal',
    },
    rules: ['core + petals·petal_size must be <= 96'],
  },
  'cc-attest/verify': { params: { stages: 'measured-boot stages of the chain' } },
  'sement/estimate': {
    params: { K: 'answers sampled', n_clusters: 'true meanings among the answers', threshold: 'entailment score above which two answers share a meaning' },
  },
  'quant/tda-fracture': { params: { anomaly: 'plant a correlation fracture in the synthetic returns' } },
  'trackfusion/associate': {
    params: { n_tracks: 'true targets tracked', n_sensors: 'sensors reporting', clutter: 'false-alarm measurements per scan' },
  },
  'testtime/scaling': {
    params: { p: 'probability that one sample is correct', N: 'samples (compute budget)', steps: 'sequential revision steps compared at equal compute' },
  },
  'specdecode/simulate': { params: { draft_len: 'tokens the draft model proposes per target call', trials: 'simulated target calls' } },
  'worldmodel/predict': { params: { horizon: 'imagined rollout steps', latent_dim: 'dimension of the latent state' } },
  'episodic/recall': {
    params: { query: 'the question retrieved against the memory stream', k: 'memories retrieved (at most n_episodes)', n_episodes: 'memories in the stream' },
    rules: ['k must not exceed n_episodes'],
  },
  'qec/surface-code': {
    params: { distance: 'code distance d of the rotated surface code (odd)', p: 'physical bit-flip probability per qubit' },
    rules: ['distance must be odd'],
    keywords: { distance: { not: { multipleOf: 2 } } },
  },
  'energy/receipt': {
    params: {
      tokens: 'tokens of the inference',
      power_w: 'average power drawn during the inference, W (the caller’s input)',
      latency_s: 'duration of the inference, s',
      grid_gco2_per_kwh: 'carbon intensity of the grid, gCO2e/kWh',
      prev_hash: 'hash of the previous receipt to chain onto (64 lowercase hex; absent: genesis)',
    },
  },
  'agentcoh/sync': { params: { agents: 'agents sharing artifacts', artifacts: 'shared artifacts', steps: 'simulated read/write steps' } },
  'elf/flow': {
    params: { dim: 'embedding dimension', targets: 'target embeddings (tokens) of the mixture', particles: 'samples drawn', steps: 'Euler steps of the flow' },
  },
  'graphmem/traverse': {
    params: { nodes: 'memory nodes', dim: 'embedding dimension', k: 'memories retrieved (at most nodes)' },
    rules: ['k must not exceed nodes'],
  },
  'kan/fit': { params: { grid: 'B-spline grid intervals per edge', samples: 'training samples', width: 'hidden width of the [2, width, 1] network' } },
  'moe/route': {
    params: { tokens: 'tokens routed', experts: 'experts', topk: 'experts chosen per token (at most experts)' },
    rules: ['topk must not exceed experts'],
  },
  'qhall/quantify': {
    params: { generations: 'sampled generations per question', dim: 'embedding dimension of a generation', latent_answers: 'distinct true answers behind the generations' },
  },
  'titans/recall': { params: { d: 'key/value dimension', patterns: 'associations memorised', epochs: 'passes over the associations' } },
  'aimc/attend': { params: { seq_len: 'sequence length (tokens)', d_head: 'head width', levels: 'quantisation levels of the analog write and the ADC' } },
  'flowmatch/sample': { params: { dims: 'dimension of the Gaussian target', steps: 'Euler steps' } },
  'grpo/reward-dynamics': { params: { group_size: 'rollouts per GRPO group', steps: 'policy-gradient steps' } },
  'kla/update': { params: { seq_len: 'sequence length (tokens)', d_state: 'state (key) dimension' } },
  'mor/route': { params: { num_tokens: 'tokens routed', max_recursion: 'most recursion steps a token can take' } },
  'rauq/score': { params: { seq_len: 'generated tokens scored', num_heads: 'attention heads per layer (one is selected)' } },
  'ssm/scan': { params: { seq_len: 'sequence length (steps of the scan)', state_dim: 'state dimension N per channel' } },
  'blt/entropy-patch': {
    params: { n_bytes: 'bytes of synthetic text patched', theta: 'global entropy threshold that starts a patch, bits', min_len: 'shortest patch, bytes' },
  },
  'formalmath/retrieve': {
    params: {
      corpus_size: 'premises in the corpus',
      dim: 'embedding dimension',
      n_relevant: 'premises relevant to the goal (at most floor(0.8·corpus_size), the accessible count)',
      k: 'retrieval depth of the recall@k curve (at most corpus_size)',
      separation: 'how far relevant premises stand out in embedding space',
    },
    rules: ['n_relevant must be at most the accessible count floor(0.8·corpus_size)', 'k must be at most corpus_size'],
  },
  'hrm/solve': {
    params: {
      dim: 'dimension of the SPD system solved',
      n_cycles: 'slow (H) updates',
      t_low: 'fast (L) steps per slow update',
      lr: 'step size of the fast module',
      h_gain: 'gain of the slow update',
      tol: 'residual below which the model halts',
    },
  },
  'kvcache/h2o-evict': {
    params: {
      seq_len: 'tokens generated',
      budget: 'KV-cache slots kept',
      recent: 'slots reserved for the most recent tokens (at most budget)',
      n_heavy: 'planted heavy-hitter tokens (at most seq_len)',
    },
    rules: ['recent must not exceed budget', 'n_heavy must not exceed seq_len'],
  },
  'nested/schedule': {
    params: {
      levels: 'memory levels',
      ticks: 'simulated ticks',
      base: 'level ℓ updates every base^ℓ ticks',
      eta0: 'learning rate of level 0',
      decay: 'learning-rate decay per level',
      drift: 'drift of the target per tick',
    },
  },
  'ringattn/simulate': { params: { seq_len: 'sequence length (tokens; at least devices)', devices: 'simulated devices in the ring' }, rules: ['seq_len must be at least devices'] },
  'steering/sweep': {
    params: {
      dim: 'activation dimension',
      cluster: 'examples per behaviour cluster',
      sweep_points: 'steering coefficients swept',
      c_max: 'largest steering coefficient',
      kappa: 'weight of the side-effect penalty',
    },
  },
  'catq/calibrate': { params: { n_params: 'weights quantised', tau: 'softness of the tanh ternariser', alpha: 'regularisation of the calibration' } },
  'genie/rollout': {
    params: { dim: 'frame (latent) dimension', n_actions: 'latent actions of the VQ codebook', horizon: 'rollout steps', rho: 'contraction factor of the dynamics' },
  },
  'inplacettt/adapt': {
    params: { dim: 'input dimension of the MLP down-projection', out_dim: 'output dimension', n_chunks: 'chunks of the stream (one fast-weight update each)', eta: 'fast-weight learning rate' },
  },
  'matgran/truncate': {
    params: {
      dim: 'full embedding dimension',
      n_classes: 'classes of the synthetic items',
      n_items: 'items embedded (at least 2·n_classes)',
      tol: 'accuracy loss tolerated when choosing the smallest granularity',
    },
    rules: ['n_items must be at least 2·n_classes'],
  },
  'nsa/simulate': {
    params: { seq_len: 'sequence length (tokens)', dim: 'head width', block: 'block size of the compressed and selected branches', top_n: 'blocks selected per query', window: 'sliding-window width' },
  },
  's3search/search': {
    params: { dim: 'dimension of the lattice landscape', budget: 'node expansions allowed', frontier: 'beam (frontier) width', beta: 'inverse temperature of the Gumbel-top-k frontier' },
  },
  'ternary/quantize': { params: { n_params: 'weights quantised', eps: 'ε added to the absmean scale' } },
  'dllm/denoise': { params: { seq_len: 'sequence length (tokens)', steps: 'unmasking steps (at most seq_len)' }, rules: ['steps must be ≤ seq_len'] },
  'goat/transport': { params: { n_q: 'queries', n_k: 'keys', iters: 'Sinkhorn iterations', reg: 'entropic regularisation ε' } },
  'interpretability/features': {
    params: { d_model: 'activation dimension', n_features: 'dictionary features of the SAE', top_k: 'active features per example (at most n_features)', batch: 'examples encoded' },
    rules: ['top_k must be ≤ n_features'],
  },
  'mla/latent-compress': {
    params: { seq_len: 'sequence length (tokens)', n_heads: 'attention heads', d_head: 'head width (a multiple of 4: the RoPE part is d_head/4)', d_latent: 'width of the latent KV' },
    rules: ['d_head must be a multiple of 4'],
    keywords: { d_head: { multipleOf: 4 } },
  },
  'pfield/coordinate': {
    params: { agents: 'agents', dim: 'dimension of the shared artifact', max_rounds: 'most coordination rounds', lr: 'step size of a local patch', gamma_decay: 'fitness decay per round' },
  },
  'slidesparse/pack': { params: { big_n: 'N of the (2N−2):2N sparsity pattern', blocks: 'blocks packed' } },
};
