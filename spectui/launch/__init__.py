"""Between the settings and the apps: opening the session a Setup names, and the record of
the models, build and machine it runs on that traces and results keep."""
