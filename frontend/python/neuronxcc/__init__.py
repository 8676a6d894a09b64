"""ncverify's stand-in for the Neuron compiler package: only `neuronxcc.nki` exists, and it
records what a kernel does instead of compiling it."""
