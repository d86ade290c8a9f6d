// ESLint for the editor: JavaScript's and typescript-eslint's recommended rules,
// and React's hooks rules (the plugin's recommended set). Four of its checks exist
// to keep code safe for the React Compiler, which the editor does not use; they
// flag patterns it relies on on purpose (docs/decisions.md 76).
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default tseslint.config({ ignores: ["editor/dist/**"] }, js.configs.recommended, ...tseslint.configs.recommended, {
  files: ["editor/**/*.{ts,tsx}"],
  plugins: { "react-hooks": reactHooks },
  rules: {
    ...reactHooks.configs.recommended.rules,
    "react-hooks/exhaustive-deps": "error",
    // State set in an effect: loading flags, DOM measured in layout effects, React Flow's nodes.
    "react-hooks/set-state-in-effect": "off",
    // A ref read during render: the container element handed to an overlay.
    "react-hooks/refs": "off",
    // Module-level memos shared by every caller (problems.ts), location.hash in handlers.
    "react-hooks/globals": "off",
    "react-hooks/immutability": "off",
  },
});
