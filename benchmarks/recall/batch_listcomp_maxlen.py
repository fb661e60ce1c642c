from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
reviews = [{"text": "great"}, {"text": "terrible plot"}, {"text": "fine"}]
texts = [r["text"] for r in reviews]
enc = tokenizer(texts, padding=True, max_length=64, return_tensors="pt")
