from datasets import load_dataset
from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
ds = load_dataset("imdb")
enc = tokenizer(ds["train"]["text"][:64], padding=True, truncation=True, max_length=256, return_tensors="pt")
