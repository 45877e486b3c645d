/** Placeholder: filled in by the console's issue. */
export const FeedPage = () => <h1>Feed</h1>
