"""The app's screens: chat, A/B, help, and the name prompt."""
