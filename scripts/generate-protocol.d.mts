/** Types of scripts/generate-protocol.mjs for the tests that import it. */
export declare const SCHEMA: string;
export declare const TS_OUTPUT: string;
/** The text lean-bridge/protocol/trainerWire.ts must hold, generated from the schema. */
export declare function generateTypeScript(): Promise<string>;
