"""Feature extraction: SURF bag of visual words, audio MFCCs, HMM kernels, image representations."""
