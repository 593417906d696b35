/** Types of compat/docRules.js, for the spec that shares its rules. */
export declare function relativeLinks(file: string, text: string): { readonly target: string; readonly resolved: string }[];
export declare function quickstartBlock(text: string): string | undefined;
