import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      "lean-env/**",
      "out/**",
      ".fim-rlvr/**",
      "test/e2e/artifacts/**",
      "**/.venv/**",
      "trainer/**",
      "*.vsix",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "no-restricted-imports": ["error", { paths: [] }],
    },
  },
  {
    files: ["**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
  },
  {
    // Generated from the protocol schema (npm run protocol:generate): a message without params (StopParams) is an empty
    // interface there, the schema's `{"properties": {}, "additionalProperties": false}`.
    files: ["lean-bridge/protocol/trainerWire.ts"],
    rules: { "@typescript-eslint/no-empty-object-type": "off" },
  },
  {
    // The bridge runs without an editor: the CLI, the tests and the trainer host load it.
    files: ["lean-bridge/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { paths: ["vscode"] }] },
  },
);
