"""Hugging Face glue: load a seq2seq model and tokenizer (safetensors only), tokenize with word
boundaries checked, translate; the engine and every method are :mod:`align`'s."""
