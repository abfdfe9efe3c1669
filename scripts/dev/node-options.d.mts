export declare const APP_NODE_OPTIONS: string
export declare function appNodeOptions(current: string | undefined): string
