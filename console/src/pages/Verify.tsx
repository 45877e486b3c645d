/** Placeholder: filled in by the console's issue. */
export const VerifyPage = ({ checkpointId }: { readonly checkpointId?: string }) => <h1>Verify {checkpointId ?? ""}</h1>
