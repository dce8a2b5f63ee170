// Type-aware lint: floating promises matter because an unawaited rejection in a worker vanishes
// silently under piscina's atomics:'sync'.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**', 'screenshots/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // V8 allocates a function literal assigned straight to a property (`obj.x = () => …`) in old
    // space, where it keeps what it closes over alive past the request until a full GC; server
    // code names the function first or builds it in an object literal. The browser pages are not
    // the server's heap.
    files: ['src/**/*.ts', 'workers/**/*.ts'],
    ignores: ['src/ui/client/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          "AssignmentExpression[operator='='][left.type='MemberExpression'] > :matches(ArrowFunctionExpression, FunctionExpression)",
          "AssignmentExpression[operator='='][left.type='MemberExpression'] > :matches(TSAsExpression, TSSatisfiesExpression, TSNonNullExpression, TSTypeAssertion) > :matches(ArrowFunctionExpression, FunctionExpression)",
        ].map((selector) => ({ selector, message: 'name the function first (or build it in an object literal) instead of assigning a function literal to a property: V8 allocates it in old space' })),
      ],
    },
  },
  {
    // the platform is what features build on: it knows no feature (each adds its own entry to
    // `Provides`) and no kernel module (the thread messages it carries live in src/lib/). An
    // allowlist of the shared layers, so a feature folder added later is covered without an edit;
    // the files sit directly in src/platform/, so `../` is src/.
    files: ['src/platform/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(\\.\\./)+(?!(config|http|isomorphic|lib|observability)/)', message: 'src/platform/ imports only src/config, http, isomorphic, lib and observability, no feature: a feature adds its types to `Provides` by augmentation' },
            { regex: '(^|/)workers(/|$)', message: 'src/platform/ imports nothing from workers/: what both threads share lives in src/lib/' },
          ],
        },
      ],
    },
  },
  {
    files: ['workers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)src/(?!lib/)', message: 'workers/ imports from src/ only the shared library src/lib/ (no HTTP layer, no feature)' }] }],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'kernels draw from src/lib/prng.ts only' }],
    },
  },
);
