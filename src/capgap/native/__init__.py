"""Native sources (CUDA/C++): preprocessor gates, kernel bodies and build files, per arch."""
