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
    files: ['workers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)src/(?!lib/)', message: 'workers/ imports from src/ only the shared library src/lib/ (no HTTP layer, no feature)' }] }],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'kernels draw from src/lib/prng.ts only' }],
    },
  },
);
