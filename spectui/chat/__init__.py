"""The chat without its screens: the session and setup in force, the conversation and its
streaming answer, the queue of messages typed ahead, storing, traces, the speed baseline,
model loading and the A/B run. Screens render what it emits and forward keys to it."""
