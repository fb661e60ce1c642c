import tensorflow as tf
from transformers import TFAutoModelForSequenceClassification


class Config:
    checkpoint = "bert-base-uncased"
    learning_rate = 0.01


model = TFAutoModelForSequenceClassification.from_pretrained(Config.checkpoint, num_labels=2)
model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=Config.learning_rate), loss="sparse_categorical_crossentropy")
