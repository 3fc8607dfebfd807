"""What the tests share: data generators, the one `invoke` of the command line, servers and a browser."""
