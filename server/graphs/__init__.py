"""Published graph versions (the registry) and the checks a spec passes before it is stored."""
